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

package io.clonos.nexmark.latency;

import io.clonos.bench.report.TimelineChart;
import io.clonos.bench.stats.LatencyHistogram;

import org.apache.flink.annotation.Internal;

import java.util.List;
import java.util.Map;

/**
 * The distributions of event-to-visible latency as cumulative curves on a logarithmic time axis (1
 * ms to the largest latency), one colour per series, as SVG.
 */
@Internal
final class LatencyCdfChart {

    private static final List<String> COLORS =
            List.of("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b");

    private LatencyCdfChart() {}

    static String svg(String title, Map<String, LatencyHistogram> series) {
        int width = 760;
        int height = 320;
        int left = 60;
        int top = 30;
        int plotWidth = width - left - 200;
        int plotHeight = height - top - 45;
        long max = 10;
        for (LatencyHistogram histogram : series.values()) {
            max = Math.max(max, histogram.quantile(1.0));
        }
        double decades = Math.max(1, Math.ceil(Math.log10(max)));
        StringBuilder svg =
                new StringBuilder(
                        String.format(
                                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-size=\"11\">%n",
                                width, height));
        svg.append(
                String.format(
                        "<text x=\"%d\" y=\"18\" font-size=\"13\">%s</text>%n",
                        left, TimelineChart.escape(title)));
        for (int d = 0; d <= decades; d++) {
            double x = left + plotWidth * d / decades;
            svg.append(
                    String.format(
                            "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                                    + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                            x,
                            top,
                            x,
                            top + plotHeight,
                            x,
                            top + plotHeight + 15,
                            millis((long) Math.pow(10, d))));
        }
        for (int q = 0; q <= 4; q++) {
            double y = top + plotHeight - plotHeight * q / 4.0;
            svg.append(
                    String.format(
                            "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                                    + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d%%</text>%n",
                            left, y, left + plotWidth, y, left - 5, y + 4, q * 25));
        }
        svg.append(
                String.format(
                        "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">event to visible at a read_committed consumer (log scale)</text>%n",
                        left + plotWidth / 2, top + plotHeight + 35));
        int index = 0;
        for (Map.Entry<String, LatencyHistogram> entry : series.entrySet()) {
            String color = COLORS.get(index % COLORS.size());
            StringBuilder points = new StringBuilder();
            for (int step = 0; step <= 400; step++) {
                double q = step / 400.0;
                long latency = Math.max(1, entry.getValue().quantile(q));
                double x = left + plotWidth * Math.log10(latency) / decades;
                double y = top + plotHeight - plotHeight * q;
                points.append(String.format("%.1f,%.1f ", x, y));
            }
            svg.append(
                    String.format(
                            "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"%s\"/>%n",
                            color, points.toString().trim()));
            svg.append(
                    String.format(
                            "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                                    + "<text x=\"%d\" y=\"%d\">%s</text>%n",
                            left + plotWidth + 15,
                            top + 10 + 18 * index,
                            color,
                            left + plotWidth + 30,
                            top + 19 + 18 * index,
                            TimelineChart.escape(entry.getKey())));
            index++;
        }
        return svg.append("</svg>\n").toString();
    }

    private static String millis(long ms) {
        return ms >= 1000 ? (ms / 1000) + " s" : ms + " ms";
    }
}
