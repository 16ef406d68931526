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

package io.clonos.bench.experiment;

import io.clonos.bench.report.TimelineChart;

import org.apache.flink.annotation.Internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The HTML page of the recovery experiment: per repetition, the sink's throughput and its mean
 * end-to-end latency over time, Clonos beside Flink, so that a reader sees what the medians
 * summarize (a stall, a backlog worked off, a checkpoint spike).
 */
@Internal
public final class RecoveryPage {

    private RecoveryPage() {}

    /** One run's figures, with its system and repetition. */
    public record Run(String system, int repetition, RecoveryFigures figures) {}

    /**
     * @param setup a sentence on the set-up, shown above the charts
     * @param table the printed medians, shown below them
     */
    public static String html(String setup, List<Run> runs, String table) {
        Map<Integer, List<Run>> byRepetition = new TreeMap<>();
        for (Run run : runs) {
            byRepetition.computeIfAbsent(run.repetition, r -> new ArrayList<>()).add(run);
        }
        StringBuilder html =
                new StringBuilder(
                        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>A TaskManager"
                                + " killed: Clonos against Flink</title></head>"
                                + "<body style=\"font-family:sans-serif\">\n"
                                + "<h1>A TaskManager killed with SIGKILL: Clonos against Flink"
                                + " 1.20.5</h1>\n<p>");
        html.append(TimelineChart.escape(setup)).append("</p>\n");
        byRepetition.forEach(
                (repetition, of) -> {
                    Map<String, List<double[]>> throughput = new LinkedHashMap<>();
                    Map<String, List<double[]>> latency = new LinkedHashMap<>();
                    for (Run run : of) {
                        List<double[]> t = new ArrayList<>();
                        List<double[]> l = new ArrayList<>();
                        for (String line : run.figures.timeline) {
                            String[] f = line.split(",");
                            double seconds = Long.parseLong(f[1]) / 1000.0;
                            long records = Long.parseLong(f[2]);
                            if (records > 0) {
                                t.add(
                                        new double[] {
                                            seconds, records * 1000.0 / RecoveryFigures.BUCKET_MS
                                        });
                                l.add(new double[] {seconds, Long.parseLong(f[3])});
                            }
                        }
                        throughput.put(run.system, t);
                        latency.put(run.system, l);
                    }
                    html.append("<h2>Repetition ").append(repetition).append("</h2>\n");
                    html.append("<h3>Records at the sink per second</h3>\n")
                            .append(
                                    TimelineChart.svg(
                                            throughput, RecoveryFigures.BUCKET_MS, "SIGKILL"));
                    html.append("<h3>End-to-end latency (ms, mean per 500 ms)</h3>\n")
                            .append(
                                    TimelineChart.svg(
                                            latency, RecoveryFigures.BUCKET_MS, "SIGKILL"));
                });
        return html.append("<pre>")
                .append(TimelineChart.escape(table))
                .append("</pre>\n</body></html>\n")
                .toString();
    }
}
