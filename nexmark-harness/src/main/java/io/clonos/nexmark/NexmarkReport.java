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

package io.clonos.nexmark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * The overhead experiment's results as a person reads them: CSV and JSON for tools, a table for the
 * terminal, and a self-contained HTML page with the throughput of each Clonos variant relative to
 * Flink's, per query.
 */
final class NexmarkReport {

    private NexmarkReport() {}

    static String csv(List<NexmarkOverhead.Run> runs) {
        StringBuilder csv =
                new StringBuilder(
                        "query,system,steady_seconds,events,events_per_second,results,relative_to_flink,latency_p50_ms,latency_p99_ms,determinant_bytes_per_event,cpu_ns_per_event\n");
        for (NexmarkOverhead.Run run : runs) {
            csv.append(
                    String.format(
                            Locale.ROOT,
                            "%d,%s,%.1f,%d,%.0f,%d,%.3f,%d,%d,%.4f,%.0f%n",
                            run.query(),
                            run.system(),
                            run.millis() / 1000.0,
                            run.events(),
                            run.eventsPerSecond(),
                            run.results(),
                            relative(runs, run),
                            run.p50Ms(),
                            run.p99Ms(),
                            run.determinantBytesPerEvent(),
                            run.cpuNsPerEvent()));
        }
        return csv.toString();
    }

    /**
     * The medians (with the spread of the throughput over the repetitions and the ratio to Flink's
     * median) and every run's figures, with the settings they were taken with.
     */
    static String json(
            List<NexmarkOverhead.Run> medians,
            List<NexmarkOverhead.Run> all,
            NexmarkOverhead.Settings settings) {
        List<String> entries = new ArrayList<>();
        for (NexmarkOverhead.Run run : medians) {
            double[] spread = spread(all, run);
            entries.add(
                    runJson(
                            run,
                            String.format(
                                    Locale.ROOT,
                                    ",\"eventsPerSecondMin\":%.0f,\"eventsPerSecondMax\":%.0f,\"relativeToFlink\":%.3f",
                                    spread[0],
                                    spread[1],
                                    relative(medians, run))));
        }
        List<String> repetitions = new ArrayList<>();
        for (NexmarkOverhead.Run run : all) {
            List<String> byThreads = new ArrayList<>();
            run.cpuNsPerEventByThreads()
                    .forEach(
                            (group, nanos) ->
                                    byThreads.add(
                                            String.format(
                                                    Locale.ROOT, "\"%s\":%.1f", group, nanos)));
            repetitions.add(
                    runJson(
                            run,
                            ",\"cpuNsPerEventByThreads\":{" + String.join(",", byThreads) + "}"));
        }
        return String.format(
                Locale.ROOT,
                "{\"benchmark\":\"nexmark-overhead\",\"warmupSeconds\":%.1f,\"steadySeconds\":%.1f,\"repetitions\":%d,\"parallelism\":%d,\"checkpointIntervalMs\":%d,\"runs\":[%s],\"everyRun\":[%s]}",
                settings.warmupMillis / 1000.0,
                settings.steadyMillis / 1000.0,
                settings.repetitions,
                settings.parallelism,
                settings.checkpointIntervalMs,
                String.join(",", entries),
                String.join(",", repetitions));
    }

    private static String runJson(NexmarkOverhead.Run run, String more) {
        return String.format(
                Locale.ROOT,
                "{\"query\":%d,\"system\":\"%s\",\"steadyMillis\":%d,\"events\":%d,\"eventsPerSecond\":%.0f,\"results\":%d,\"latencyP50Ms\":%d,\"latencyP99Ms\":%d,\"determinantBytesPerEvent\":%.4f,\"cpuNsPerEvent\":%.0f%s}",
                run.query(),
                run.system(),
                run.millis(),
                run.events(),
                run.eventsPerSecond(),
                run.results(),
                run.p50Ms(),
                run.p99Ms(),
                run.determinantBytesPerEvent(),
                run.cpuNsPerEvent(),
                more);
    }

    /** The lowest and the highest throughput of the runs of {@code median}'s query and system. */
    private static double[] spread(List<NexmarkOverhead.Run> all, NexmarkOverhead.Run median) {
        double[] spread = {Double.MAX_VALUE, 0};
        for (NexmarkOverhead.Run run : all) {
            if (run.query() == median.query() && run.system().equals(median.system())) {
                spread[0] = Math.min(spread[0], run.eventsPerSecond());
                spread[1] = Math.max(spread[1], run.eventsPerSecond());
            }
        }
        return spread[1] == 0 ? new double[] {0, 0} : spread;
    }

    static String table(List<NexmarkOverhead.Run> runs, List<NexmarkOverhead.Run> all) {
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "%-6s", "query"));
        for (String system : NexmarkOverhead.SYSTEMS) {
            table.append(String.format(Locale.ROOT, " %22s", system + " (ev/s)"));
        }
        table.append(String.format(Locale.ROOT, " %12s %12s%n", "dsd-1/flink", "full/flink"));
        for (Map.Entry<Integer, Map<String, NexmarkOverhead.Run>> query :
                byQuery(runs).entrySet()) {
            table.append(String.format(Locale.ROOT, "Q%-5d", query.getKey()));
            for (String system : NexmarkOverhead.SYSTEMS) {
                NexmarkOverhead.Run run = query.getValue().get(system);
                table.append(
                        String.format(
                                Locale.ROOT, " %22.0f", run == null ? 0 : run.eventsPerSecond()));
            }
            table.append(
                    String.format(
                            Locale.ROOT,
                            " %12.2f %12.2f%n",
                            relative(runs, query.getValue().get("clonos-dsd-1")),
                            relative(runs, query.getValue().get("clonos-dsd-full"))));
        }
        section(
                table,
                "Throughput over the runs, lowest - highest (events/s)",
                runs,
                NexmarkOverhead.SYSTEMS,
                run -> {
                    double[] spread = spread(all, run);
                    return String.format(Locale.ROOT, "%.0f - %.0f", spread[0], spread[1]);
                });
        section(
                table,
                "End-to-end latency, p50 / p99 (ms)",
                runs,
                NexmarkOverhead.SYSTEMS,
                run -> run.p50Ms() < 0 ? "n/a" : run.p50Ms() + " / " + run.p99Ms());
        section(
                table,
                "CPU per event in the steady state, all threads of the JVM (ns)",
                runs,
                NexmarkOverhead.SYSTEMS,
                run -> String.format(Locale.ROOT, "%.0f", run.cpuNsPerEvent()));
        List<String> clonos = NexmarkOverhead.SYSTEMS.subList(1, NexmarkOverhead.SYSTEMS.size());
        section(
                table,
                "Determinant bytes per event",
                runs,
                clonos,
                run -> String.format(Locale.ROOT, "%.3f", run.determinantBytesPerEvent()));
        table.append(String.format(Locale.ROOT, "%-6s", "mean"));
        int queries = byQuery(runs).size();
        for (String system : clonos) {
            double sum =
                    runs.stream()
                            .filter(run -> run.system().equals(system))
                            .mapToDouble(NexmarkOverhead.Run::determinantBytesPerEvent)
                            .sum();
            table.append(String.format(Locale.ROOT, " %22.3f", sum / Math.max(1, queries)));
        }
        table.append('\n');
        return table.toString();
    }

    /** A table under {@code title}: a row per query, a column per system, a cell per run. */
    private static void section(
            StringBuilder table,
            String title,
            List<NexmarkOverhead.Run> runs,
            List<String> systems,
            Function<NexmarkOverhead.Run, String> cell) {
        table.append(String.format(Locale.ROOT, "%n%s%n%-6s", title, "query"));
        for (String system : systems) {
            table.append(String.format(Locale.ROOT, " %22s", system));
        }
        table.append('\n');
        for (Map.Entry<Integer, Map<String, NexmarkOverhead.Run>> query :
                byQuery(runs).entrySet()) {
            table.append(String.format(Locale.ROOT, "Q%-5d", query.getKey()));
            for (String system : systems) {
                NexmarkOverhead.Run run = query.getValue().get(system);
                table.append(
                        String.format(Locale.ROOT, " %22s", run == null ? "n/a" : cell.apply(run)));
            }
            table.append('\n');
        }
    }

    /** A bar chart (inline SVG) of each Clonos variant's throughput over Flink's, per query. */
    static String html(
            List<NexmarkOverhead.Run> runs,
            List<NexmarkOverhead.Run> all,
            NexmarkOverhead.Settings settings) {
        Map<Integer, Map<String, NexmarkOverhead.Run>> queries = byQuery(runs);
        int barWidth = 14;
        int groupWidth = 3 * barWidth + 12;
        int height = 260;
        int top = 20;
        double max = 1.2;
        for (NexmarkOverhead.Run run : runs) {
            max = Math.max(max, relative(runs, run));
        }
        int width = 60 + queries.size() * groupWidth;
        StringBuilder svg = new StringBuilder();
        svg.append(
                String.format(
                        Locale.ROOT,
                        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">%n",
                        width,
                        height + 70));
        for (double tick = 0; tick <= max + 1e-9; tick += 0.2) {
            double y = top + height - tick / max * height;
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<line x1=\"50\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/><text x=\"45\" y=\"%.1f\" text-anchor=\"end\">%.1f</text>%n",
                            width,
                            y,
                            y,
                            Math.abs(tick - 1.0) < 1e-9 ? "#444" : "#ddd",
                            y + 4,
                            tick));
        }
        String[] colors = {"#999999", "#1f77b4", "#ff7f0e"};
        int x = 60;
        for (Map.Entry<Integer, Map<String, NexmarkOverhead.Run>> query : queries.entrySet()) {
            for (int i = 0; i < NexmarkOverhead.SYSTEMS.size(); i++) {
                NexmarkOverhead.Run run = query.getValue().get(NexmarkOverhead.SYSTEMS.get(i));
                double value = run == null ? 0 : relative(runs, run);
                double barHeight = value / max * height;
                svg.append(
                        String.format(
                                Locale.ROOT,
                                "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"><title>Q%d %s: %.2f of Flink's throughput</title></rect>%n",
                                x + i * barWidth,
                                top + height - barHeight,
                                barWidth - 2,
                                barHeight,
                                colors[i],
                                query.getKey(),
                                NexmarkOverhead.SYSTEMS.get(i),
                                value));
            }
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">Q%d</text>%n",
                            x + 3 * barWidth / 2,
                            top + height + 16,
                            query.getKey()));
            x += groupWidth;
        }
        for (int i = 0; i < NexmarkOverhead.SYSTEMS.size(); i++) {
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>%n",
                            60 + i * 140,
                            top + height + 32,
                            colors[i],
                            60 + i * 140 + 16,
                            top + height + 42,
                            NexmarkOverhead.SYSTEMS.get(i)));
        }
        svg.append("</svg>\n");
        return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Nexmark: Clonos against Flink</title></head><body>\n"
                + "<h1>Nexmark throughput relative to Flink 1.20.5</h1>\n"
                + String.format(
                        Locale.ROOT,
                        "<p>Each run %.0f s of warm-up, then %.0f s of steady state; medians of %d runs; parallelism %d, streaming, a checkpoint every %d ms; 1.0 is Flink's throughput. Hover a bar for its value.</p>%n",
                        settings.warmupMillis / 1000.0,
                        settings.steadyMillis / 1000.0,
                        settings.repetitions,
                        settings.parallelism,
                        settings.checkpointIntervalMs)
                + svg
                + "<pre>"
                + table(runs, all)
                + "</pre>\n</body></html>\n";
    }

    private static double relative(List<NexmarkOverhead.Run> runs, NexmarkOverhead.Run run) {
        if (run == null) {
            return 0;
        }
        for (NexmarkOverhead.Run flink : runs) {
            if (flink.query() == run.query() && flink.system().equals("flink")) {
                return flink.eventsPerSecond() == 0
                        ? 0
                        : run.eventsPerSecond() / flink.eventsPerSecond();
            }
        }
        return 0;
    }

    private static Map<Integer, Map<String, NexmarkOverhead.Run>> byQuery(
            List<NexmarkOverhead.Run> runs) {
        Map<Integer, Map<String, NexmarkOverhead.Run>> queries = new LinkedHashMap<>();
        for (NexmarkOverhead.Run run : runs) {
            queries.computeIfAbsent(run.query(), q -> new LinkedHashMap<>()).put(run.system(), run);
        }
        return queries;
    }
}
