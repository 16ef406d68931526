/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file
 * except in compliance with the License. You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the
 * License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND,
 * either express or implied. See the License for the specific language governing permissions
 * and limitations under the License.
 */

package io.clonos.bench.report;

import org.apache.flink.annotation.Internal;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The timelines of the failure experiments as inline SVG, so that their HTML pages need nothing but
 * a browser: Clonos's and Flink's throughput or latency around a failure, side by side. One place
 * for the Nexmark experiment and the synthetic one, which run from different class paths (this
 * module is on both).
 */
@Internal
public final class TimelineChart {

    private static final List<String> COLORS =
            List.of("#1f77b4", "#999999", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b");

    private TimelineChart() {}

    /**
     * A line chart of each series ({@code {seconds since the failure, value}} points, in time
     * order), one colour per series in the map's order, the failure marked at 0 s with {@code
     * failure}; a line breaks where a series has no point for more than 1.5 buckets of {@code
     * bucketMs} (nothing arrived then) rather than bridging the gap.
     */
    public static String svg(Map<String, List<double[]>> series, long bucketMs, String failure) {
        int width = 900;
        int height = 260;
        int left = 70;
        int top = 10;
        double minX = Double.MAX_VALUE;
        double maxX = -Double.MAX_VALUE;
        double maxY = 1;
        for (List<double[]> points : series.values()) {
            for (double[] p : points) {
                minX = Math.min(minX, p[0]);
                maxX = Math.max(maxX, p[0]);
                maxY = Math.max(maxY, p[1]);
            }
        }
        if (minX > maxX) {
            minX = 0;
            maxX = 1;
        }
        double x0 = minX;
        double xSpan = Math.max(1e-9, maxX - minX);
        double yMax = maxY * 1.05;
        StringBuilder svg =
                new StringBuilder(
                        String.format(
                                Locale.ROOT,
                                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-size=\"11\">%n",
                                width + left + 20,
                                height + top + 50));
        for (int i = 0; i <= 4; i++) {
            double y = top + height - i * height / 4.0;
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>%n",
                            left,
                            left + width,
                            y,
                            y,
                            left - 5,
                            y + 4,
                            yMax * i / 4));
        }
        for (double s = Math.ceil(minX / 5) * 5; s <= maxX; s += 5) {
            double x = left + (s - x0) / xSpan * width;
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"%s\"/><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f s</text>%n",
                            x,
                            x,
                            top,
                            top + height,
                            s == 0 ? "#d62728" : "#eee",
                            x,
                            top + height + 15,
                            s));
        }
        int i = 0;
        double gap = 1.5 * bucketMs / 1000.0;
        for (Map.Entry<String, List<double[]>> entry : series.entrySet()) {
            String color = COLORS.get(i % COLORS.size());
            StringBuilder points = new StringBuilder();
            double previous = Double.NaN;
            for (double[] p : entry.getValue()) {
                if (p[0] - previous > gap) {
                    svg.append(polyline(color, points));
                    points.setLength(0);
                }
                points.append(
                        String.format(
                                Locale.ROOT,
                                "%.1f,%.1f ",
                                left + (p[0] - x0) / xSpan * width,
                                top + height - p[1] / yMax * height));
                previous = p[0];
            }
            svg.append(polyline(color, points));
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>%n",
                            left + i * 120,
                            top + height + 26,
                            color,
                            left + i * 120 + 16,
                            top + height + 36,
                            escape(entry.getKey())));
            i++;
        }
        svg.append(
                String.format(
                        Locale.ROOT,
                        "<text x=\"%d\" y=\"%d\" fill=\"#d62728\">%s at 0 s</text>%n",
                        left + Math.max(2, series.size()) * 120 + 20,
                        top + height + 36,
                        escape(failure)));
        return svg.append("</svg>\n").toString();
    }

    private static String polyline(String color, CharSequence points) {
        return points.length() == 0
                ? ""
                : String.format(
                        Locale.ROOT,
                        "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"%s\"/>%n",
                        color,
                        points.toString().trim());
    }

    /** Text as HTML shows it literally. */
    public static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
