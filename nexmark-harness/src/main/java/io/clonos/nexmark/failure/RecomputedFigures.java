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

import io.clonos.bench.stats.Percentiles;

import org.apache.flink.annotation.Internal;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;

/**
 * {@code bin/clonos nexmark figures}: a failure experiment's latency figures computed again from
 * the result times it wrote ({@code <query>-outputs-<system>-<repetition>.csv}, milliseconds since
 * the failure), with another window for the level before the failure. A job whose start-up outlasts
 * the default window (two thirds of the time before the failure: the synthetic job filling
 * gigabytes of state) has a level and a 99th percentile that include the start-up, which widens the
 * bound until no recovery shows; its figures need a window within the settled part.
 */
@Internal
public final class RecomputedFigures {

    private static final String OUTPUTS = "-outputs-";

    private RecomputedFigures() {}

    /** The figures of every run in {@code dir}, as a table and {@code <query>-figures.json}. */
    public static void write(Path dir, long baselineMs, PrintStream out) throws IOException {
        TreeMap<String, FailureFigures> runs = new TreeMap<>();
        TreeMap<String, List<WindowFirings.Firing>> firings = new TreeMap<>();
        String query = null;
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.sorted().toList()) {
                String name = file.getFileName().toString();
                int at = name.indexOf(OUTPUTS);
                if (at <= 0 || !name.endsWith(".csv")) {
                    continue;
                }
                query = name.substring(0, at);
                String label = name.substring(at + OUTPUTS.length(), name.length() - 4);
                List<FailureFigures.Output> outputs = read(file);
                runs.put(label, new FailureFigures(label, outputs, 0, baselineMs));
                firings.put(label, WindowFirings.of(outputs));
            }
        }
        if (runs.isEmpty()) {
            throw new IllegalArgumentException(
                    "--outputs " + dir + " holds no <query>-outputs-<run>.csv of a failure run.");
        }
        List<String> lines = new ArrayList<>();
        List<String> systems = new ArrayList<>();
        for (String system : NexmarkFailure.SYSTEMS) {
            List<FailureFigures> of =
                    runs.values().stream().filter(f -> f.system.startsWith(system + "-")).toList();
            if (of.isEmpty()) {
                continue;
            }
            systems.add(
                    String.format(
                            Locale.ROOT,
                            "\"%s\":{\"recovery_ms\":%d,\"recovery_robust_ms\":%d,\"max_output_gap_ms\":%d,\"runs\":%d}",
                            system,
                            median(of, f -> f.recoveryMs),
                            median(of, f -> f.robustRecoveryMs),
                            median(of, f -> f.longestGapMs),
                            of.size()));
        }
        out.printf(
                Locale.ROOT,
                "Level before the failure: the results of the %d ms before it%n%-12s %12s %12s %12s %12s %12s%n",
                baselineMs,
                "run",
                "mean (ms)",
                "p99 (ms)",
                "bound (ms)",
                "recovery",
                "robust");
        for (FailureFigures f : runs.values()) {
            out.printf(
                    Locale.ROOT,
                    "%-12s %12d %12d %12d %12d %12d%n",
                    f.system,
                    f.baselineLatencyMs,
                    f.p99BeforeMs,
                    f.latencyBoundMs,
                    f.recoveryMs,
                    f.robustRecoveryMs);
            lines.add(
                    String.format(
                            Locale.ROOT, "{\"run\":\"%s\",\"figures\":%s}", f.system, f.json()));
        }
        printFirings(firings, out);
        Files.writeString(
                dir.resolve(query + "-figures.json"),
                String.format(
                        Locale.ROOT,
                        "{\"baseline_ms\":%d,%s,\"runs\":[%s]}%n",
                        baselineMs,
                        String.join(",", systems),
                        String.join(",", lines)));
    }

    /** Each run's window firings, if its query has windows. */
    private static void printFirings(
            TreeMap<String, List<WindowFirings.Firing>> firings, PrintStream out) {
        if (firings.values().stream().allMatch(List::isEmpty)) {
            return;
        }
        out.printf(
                Locale.ROOT,
                "%nWindow firings, per output partition (times since the failure, latencies in ms)%n"
                        + "%-12s %10s %9s %8s %8s %8s %8s %10s%n",
                "run",
                "window end",
                "partition",
                "results",
                "first",
                "p50",
                "last",
                "results/s");
        firings.forEach(
                (run, ofRun) ->
                        ofRun.forEach(
                                f ->
                                        out.printf(
                                                Locale.ROOT,
                                                "%-12s %10d %9d %8d %8d %8d %8d %10d%n",
                                                run,
                                                f.dueAt(),
                                                f.partition(),
                                                f.results(),
                                                f.first(),
                                                f.median(),
                                                f.last(),
                                                f.perSecond())));
    }

    /** A run's results, their times relative to the failure (so the failure is at 0). */
    private static List<FailureFigures.Output> read(Path file) throws IOException {
        List<FailureFigures.Output> outputs = new ArrayList<>();
        List<String> lines = Files.readAllLines(file);
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",");
            if (f.length != 3) {
                throw new IllegalArgumentException(
                        file + ": not a line of result times: '" + line + "'");
            }
            outputs.add(
                    new FailureFigures.Output(
                            Long.parseLong(f[0]),
                            Long.parseLong(f[1]),
                            Integer.parseInt(f[2]),
                            ""));
        }
        return outputs;
    }

    private static long median(List<FailureFigures> runs, ToLongFunction<FailureFigures> figure) {
        return Percentiles.of(runs.stream().mapToLong(figure), 0.5);
    }
}
