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

package io.clonos.nexmark.failure;

import io.clonos.bench.report.RecoveryBreakdown;
import io.clonos.bench.report.TimelineChart;
import io.clonos.bench.stats.Percentiles;

import org.apache.flink.annotation.Internal;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * The failure experiment's results as a person reads them: a table in the terminal, the timelines
 * as CSV, the figures as JSON, and a self-contained HTML page with throughput and latency over time
 * around the failure, Clonos beside Flink (the paper's Figure 6).
 */
@Internal
final class FailureReport {

    private FailureReport() {}

    static void write(
            FailureSettings settings,
            String failure,
            long capacity,
            List<NexmarkFailure.Run> runs,
            PrintStream out)
            throws IOException {
        Files.createDirectories(settings.output);
        String prefix = settings.query.id() + "-";
        List<String> timeline = new ArrayList<>();
        timeline.add(FailureFigures.TIMELINE_HEADER);
        runs.forEach(run -> timeline.addAll(run.figures().timeline));
        Files.write(settings.output.resolve(prefix + "timeline.csv"), timeline);
        Files.writeString(
                settings.output.resolve(prefix + "summary.json"),
                json(settings, failure, capacity, runs) + "\n");
        Files.writeString(settings.output.resolve(prefix + "failure.html"), html(settings, runs));
        out.println(table(runs));
        out.println("Results: " + settings.output.toAbsolutePath());
    }

    /**
     * A run's results' times and partitions, in milliseconds since the failure, so that its figures
     * can be computed again: {@code <query>-outputs-<system>-<repetition>.csv}.
     */
    static void writeOutputs(
            FailureSettings settings,
            String label,
            long killedAt,
            List<FailureFigures.Output> outputs)
            throws IOException {
        Files.createDirectories(settings.output);
        List<String> lines = new ArrayList<>();
        lines.add("appended_ms_since_kill,due_ms_since_kill,partition");
        for (FailureFigures.Output output : outputs) {
            lines.add(
                    (output.appendedAt() - killedAt)
                            + ","
                            + (output.dueAt() - killedAt)
                            + ","
                            + output.partition());
        }
        Files.write(
                settings.output.resolve(settings.query.id() + "-outputs-" + label + ".csv"), lines);
    }

    static String table(List<NexmarkFailure.Run> runs) {
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "%-44s", ""));
        runs.forEach(run -> table.append(String.format(Locale.ROOT, " %12s", run.label())));
        table.append('\n');
        row(
                table,
                runs,
                "latency before the failure, mean (ms)",
                run -> run.figures().baselineLatencyMs);
        row(table, runs, "latency before the failure, p50 (ms)", run -> run.figures().p50BeforeMs);
        row(table, runs, "latency before the failure, p99 (ms)", run -> run.figures().p99BeforeMs);
        row(table, runs, "latency bound for recovery (ms)", run -> run.figures().latencyBoundMs);
        row(table, runs, "latency after the failure, p99 (ms)", run -> run.figures().p99AfterMs);
        row(table, runs, "detection: failure recorded after (ms)", run -> run.detectionMs());
        row(table, runs, "lost subtask's first result after (ms)", run -> run.firstOutputMs());
        row(
                table,
                runs,
                "recovery time: latency back in bounds (ms)",
                NexmarkFailure.Run::recoveryMs);
        row(
                table,
                runs,
                "  robust: 3 s under the p99 before (ms)",
                run -> run.figures().robustRecoveryMs);
        row(
                table,
                runs,
                "longest output gap after the failure (ms)",
                run -> run.figures().longestGapMs);
        for (String phase : RecoveryBreakdown.PHASES) {
            row(table, runs, "  breakdown: " + phase + " (ms)", run -> run.breakdown().ms(phase));
        }
        row(table, runs, "subtasks restarted", run -> run.restartedSubtasks());
        row(table, runs, "state at the last checkpoint (MB)", run -> run.stateBytes() / 1_000_000);
        row(table, runs, "results", run -> run.figures().results);
        row(table, runs, "results missing against failure-free run", NexmarkFailure.Run::missing);
        row(
                table,
                runs,
                "results duplicated against failure-free run",
                NexmarkFailure.Run::duplicated);
        return table.toString();
    }

    private static void row(
            StringBuilder table,
            List<NexmarkFailure.Run> runs,
            String label,
            ToLongFunction<NexmarkFailure.Run> value) {
        table.append(String.format(Locale.ROOT, "%-44s", label));
        runs.forEach(
                run -> table.append(String.format(Locale.ROOT, " %12d", value.applyAsLong(run))));
        table.append('\n');
    }

    /**
     * The setup; under {@code clonos} and {@code flink} each system's medians over its runs, with
     * their minimum and maximum, and the results lost and duplicated summed over the runs (a median
     * would hide one bad run); and every run's figures.
     */
    static String json(
            FailureSettings settings,
            String failure,
            long capacity,
            List<NexmarkFailure.Run> runs) {
        List<String> entries = new ArrayList<>();
        for (NexmarkFailure.Run run : runs) {
            entries.add(
                    String.format(
                            Locale.ROOT,
                            "{\"system\":\"%s\",\"repetition\":%d,\"figures\":%s,\"breakdown\":%s,\"detectionMs\":%d,\"firstOutputMs\":%d,\"stateBytes\":%d,\"restartedSubtasks\":%d,\"subtasks\":%d,\"missing\":%d,\"duplicated\":%d,\"exactlyOnce\":%b,\"local\":%b}",
                            run.system(),
                            run.repetition(),
                            run.figures().json(),
                            run.breakdown().json(),
                            run.detectionMs(),
                            run.firstOutputMs(),
                            run.stateBytes(),
                            run.restartedSubtasks(),
                            run.subtasks(),
                            run.missing(),
                            run.duplicated(),
                            run.exactlyOnce(),
                            run.local()));
        }
        List<String> systems = new ArrayList<>();
        for (String system : NexmarkFailure.SYSTEMS) {
            List<NexmarkFailure.Run> of =
                    runs.stream().filter(run -> run.system().equals(system)).toList();
            systems.add("\"" + system + "\":" + medians(of));
        }
        return String.format(
                Locale.ROOT,
                "{\"benchmark\":\"nexmark-failure\",\"setup\":{\"processes\":\"%s\",\"failure\":\"%s\",\"query\":%s,\"failures\":\"%s\",\"kills\":%d,\"kill_spacing_ms\":%d,\"events\":%d,\"rate\":%d,\"load\":%s,\"capacity\":%d,\"parallelism\":%d,\"checkpoint_interval_ms\":%d,\"state_mb\":%.1f,\"person_bytes\":%d,\"auction_bytes\":%d,\"kill_after_s\":%d,\"baseline_ms\":%d,\"standby\":%b,\"repetitions\":%d},%s,\"runs\":[%s]}",
                settings.processes,
                failure,
                settings.query.json(),
                settings.failures.label(),
                settings.failures.kills,
                settings.failures.spacingMs,
                settings.events(),
                settings.rate,
                settings.load > 0 ? String.format(Locale.ROOT, "%.2f", settings.load) : "null",
                capacity,
                settings.parallelism,
                settings.checkpointIntervalMs,
                median(runs, NexmarkFailure.Run::stateBytes) / 1e6,
                settings.eventSizes.personBytes(),
                settings.eventSizes.auctionBytes(),
                settings.killAfterSeconds,
                settings.baselineMs(),
                settings.standby,
                settings.repetitions,
                String.join(",", systems),
                String.join(",", entries));
    }

    private static String medians(List<NexmarkFailure.Run> runs) {
        List<String> fields = new ArrayList<>();
        Map<String, ToLongFunction<NexmarkFailure.Run>> figures = new LinkedHashMap<>();
        figures.put("detection_ms", NexmarkFailure.Run::detectionMs);
        figures.put("recovery_ms", NexmarkFailure.Run::recoveryMs);
        figures.put("recovery_robust_ms", run -> run.figures().robustRecoveryMs);
        figures.put("first_output_ms", NexmarkFailure.Run::firstOutputMs);
        figures.put("max_output_gap_ms", run -> run.figures().longestGapMs);
        figures.forEach(
                (name, figure) -> {
                    fields.add(String.format(Locale.ROOT, "\"%s\":%d", name, median(runs, figure)));
                    fields.add(
                            String.format(
                                    Locale.ROOT,
                                    "\"%s_range\":[%d,%d]",
                                    name,
                                    runs.stream().mapToLong(figure).min().orElse(-1),
                                    runs.stream().mapToLong(figure).max().orElse(-1)));
                });
        fields.add(
                "\"breakdown\":"
                        + RecoveryBreakdown.json(
                                phase -> median(runs, run -> run.breakdown().ms(phase))));
        fields.add("\"lost\":" + runs.stream().mapToLong(NexmarkFailure.Run::missing).sum());
        fields.add(
                "\"duplicated\":" + runs.stream().mapToLong(NexmarkFailure.Run::duplicated).sum());
        fields.add("\"runs\":" + runs.size());
        return "{" + String.join(",", fields) + "}";
    }

    /** The median (the lower of the middle two), -1 without runs. */
    static long median(List<NexmarkFailure.Run> runs, ToLongFunction<NexmarkFailure.Run> figure) {
        return Percentiles.of(runs.stream().mapToLong(figure), 0.5);
    }

    static String html(FailureSettings settings, List<NexmarkFailure.Run> runs) {
        Map<String, List<double[]>> throughput = new LinkedHashMap<>();
        Map<String, List<double[]>> latency = new LinkedHashMap<>();
        for (NexmarkFailure.Run run : runs) {
            List<double[]> t = new ArrayList<>();
            List<double[]> l = new ArrayList<>();
            for (String line : run.figures().timeline) {
                String[] f = line.split(",");
                double seconds = Long.parseLong(f[1]) / 1000.0;
                t.add(new double[] {seconds, Double.parseDouble(f[3])});
                if (Long.parseLong(f[4]) >= 0) {
                    l.add(new double[] {seconds, Long.parseLong(f[4])});
                }
            }
            throughput.put(run.label(), t);
            latency.put(run.label(), l);
        }
        return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
                + settings.query.title()
                + ": a TaskManager lost, Clonos against Flink</title></head>"
                + "<body style=\"font-family:sans-serif\">\n"
                + "<h1>"
                + settings.query.title()
                + ": a TaskManager lost, Clonos against Flink 1.20.5</h1>\n"
                + String.format(
                        Locale.ROOT,
                        "<p>%,d events at %,d/s, parallelism %d, checkpoints every %d ms; the TaskManager running the query's first subtask is lost at 0 s (%s processes); each run labelled system-repetition. "
                                + "Measured at the output topic (when results reached the broker; committed results only), per %d ms.</p>%n",
                        settings.events(),
                        settings.rate,
                        settings.parallelism,
                        settings.checkpointIntervalMs,
                        settings.processes,
                        FailureFigures.BUCKET_MS)
                + "<h2>Throughput (results/s)</h2>\n"
                + TimelineChart.svg(throughput, FailureFigures.BUCKET_MS, "TaskManager lost")
                + "<h2>End-to-end latency (ms, mean per interval)</h2>\n"
                + TimelineChart.svg(latency, FailureFigures.BUCKET_MS, "TaskManager lost")
                + "<pre>"
                + table(runs)
                + "</pre>\n</body></html>\n";
    }
}
