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

import io.clonos.bench.stats.ThreadCpuSampler;

import org.apache.flink.annotation.Internal;

import java.io.PrintStream;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * {@code bin/clonos bench overhead}: the synthetic job with an unthrottled source, on vanilla Flink
 * 1.20.5 and on Clonos at determinant sharing depth 0, 1 and full in the same run, without
 * failures: throughput, end-to-end latency and determinant bytes per record, so that the cost of
 * Clonos in failure-free operation shows. Each system runs {@code repetitions} times, alternating,
 * each run in a JVM of its own ({@link OverheadRun}); the median run counts.
 */
@Internal
public final class OverheadBenchmark {

    /** The benchmark's knobs. */
    public static final class Settings {
        public long records = 40_000_000;

        /** What each sink receives before this is not counted (JIT, caches, first checkpoints). */
        public long warmupMillis = 5_000;

        /**
         * Records per second the sources are held to during the warm-up ({@link WarmUpRate}); 0: as
         * fast as the job runs.
         */
        public int warmupRate = 0;

        public int keys = 64;
        public int parallelism = 2;
        public int stateBytesPerKey = 1024;
        public long checkpointIntervalMs = 5_000;
        public int repetitions = 3;
        public Path output = Path.of("bench-results", "overhead");

        /** Settings of the Clonos clusters (e.g. the in-flight log's spill policy). */
        public Map<String, String> clonosProperties = Map.of();

        /** The systems to compare; the first is the one the others are measured against. */
        public List<Variant> variants = Variant.sharingDepths();

        /** What the summary calls the benchmark. */
        public String name = "overhead";

        /**
         * Each run in a JVM of its own ({@link OverheadRun}); false runs them all in this one,
         * after a warm-up run of each system.
         */
        public boolean freshJvmPerRun = true;
    }

    private final Settings settings;
    private final PrintStream out;

    public OverheadBenchmark(Settings settings, PrintStream out) {
        this.settings = settings;
        this.out = out;
    }

    /**
     * One system the benchmark measures: vanilla Flink, or Clonos with some settings of its own (on
     * top of {@link Settings#clonosProperties}).
     */
    public record Variant(
            String label, boolean clonos, Map<String, String> properties, boolean fromJobJar) {

        public static final Variant FLINK = new Variant("Flink", false, Map.of(), false);

        /** Flink and Clonos at determinant sharing depth 0, 1 and full. */
        public static List<Variant> sharingDepths() {
            return List.of(FLINK, dsd("DSD 0", "0"), dsd("DSD 1", "1"), dsd("DSD full", "-1"));
        }

        /**
         * {@link #sharingDepths}, and the job at DSD full with its classes in a job jar, as a user
         * submits them: Flink's user-code class loader loads them, so Clonos rewrites their clock
         * reads into causal calls ({@code clonos.user-code.causal-calls}, whose cost this shows),
         * and once more with the rewriting off, which tells the cost of the rewriting from that of
         * loading the job from a jar.
         */
        public static List<Variant> withUserCode() {
            List<Variant> variants = new ArrayList<>(sharingDepths());
            variants.add(
                    new Variant(
                            "DSD full, job jar",
                            true,
                            Map.of("clonos.determinant-sharing-depth", "-1"),
                            true));
            variants.add(
                    new Variant(
                            "DSD full, job jar, calls not rewritten",
                            true,
                            Map.of(
                                    "clonos.determinant-sharing-depth",
                                    "-1",
                                    "clonos.user-code.causal-calls",
                                    "false"),
                            true));
            return variants;
        }

        /** Flink and Clonos with {@code properties}. */
        public static Variant clonos(String label, Map<String, String> properties) {
            return new Variant(label, true, properties, false);
        }

        private static Variant dsd(String label, String depth) {
            return clonos(label, Map.of("clonos.determinant-sharing-depth", depth));
        }
    }

    /** One run's figures, over the sinks' steady state. */
    static final class Run implements Serializable {
        private static final long serialVersionUID = 1L;

        final double recordsPerSecond;
        final long p50;
        final long p99;
        final double determinantBytesPerRecord;

        /**
         * Per kind of determinant ({@code DeterminantEncoding.KINDS}); kinds without bytes left
         * out.
         */
        final Map<String, Double> determinantBytesPerRecordByKind;

        final double cpuMicrosPerRecord;
        final double steadySeconds;

        /** The most one task's in-flight logs held in memory, and on disk, at a sample. */
        final long maxLogMemoryPerTask;

        final long maxLogDiskPerTask;

        /**
         * CPU nanoseconds per record in the steady state, by group of threads ({@link
         * ThreadCpuSampler}); empty where the threads cannot be sampled.
         */
        final Map<String, Double> steadyCpuNanosPerRecordByThreads;

        Run(
                double recordsPerSecond,
                long p50,
                long p99,
                double determinantBytesPerRecord,
                Map<String, Double> determinantBytesPerRecordByKind,
                double cpuMicrosPerRecord,
                double steadySeconds,
                long maxLogMemoryPerTask,
                long maxLogDiskPerTask,
                Map<String, Double> steadyCpuNanosPerRecordByThreads) {
            this.recordsPerSecond = recordsPerSecond;
            this.p50 = p50;
            this.p99 = p99;
            this.determinantBytesPerRecord = determinantBytesPerRecord;
            this.determinantBytesPerRecordByKind = determinantBytesPerRecordByKind;
            this.cpuMicrosPerRecord = cpuMicrosPerRecord;
            this.steadySeconds = steadySeconds;
            this.maxLogMemoryPerTask = maxLogMemoryPerTask;
            this.maxLogDiskPerTask = maxLogDiskPerTask;
            this.steadyCpuNanosPerRecordByThreads = steadyCpuNanosPerRecordByThreads;
        }

        /** The steady state's CPU per record of all threads sampled. */
        double steadyCpuNanosPerRecord() {
            return steadyCpuNanosPerRecordByThreads.values().stream()
                    .mapToDouble(Double::doubleValue)
                    .sum();
        }

        String json(String system) {
            return String.format(
                    Locale.ROOT,
                    "{\"system\":\"%s\",\"records_per_s\":%.0f,\"latency_p50_ms\":%d,\"latency_p99_ms\":%d,\"cpu_us_per_record\":%.3f,\"steady_s\":%.1f,\"determinant_bytes_per_record\":%.2f,\"determinant_bytes_per_record_by_kind\":{%s},\"max_log_memory_per_task_bytes\":%d,\"max_log_disk_per_task_bytes\":%d,\"steady_cpu_ns_per_record\":%.1f,\"steady_cpu_ns_per_record_by_threads\":{%s}}",
                    system,
                    recordsPerSecond,
                    p50,
                    p99,
                    cpuMicrosPerRecord,
                    steadySeconds,
                    determinantBytesPerRecord,
                    byKind("\"%s\":%.4f", ","),
                    maxLogMemoryPerTask,
                    maxLogDiskPerTask,
                    steadyCpuNanosPerRecord(),
                    byThreads("\"%s\":%.1f", ","));
        }

        /** The steady state's CPU per record of each group of threads, formatted, joined. */
        String byThreads(String format, String separator) {
            return joined(steadyCpuNanosPerRecordByThreads, format, separator);
        }

        /** The bytes per record of each kind, each formatted by {@code format}, joined. */
        String byKind(String format, String separator) {
            return joined(determinantBytesPerRecordByKind, format, separator);
        }

        /** Each entry of {@code figures} formatted by {@code format} (name, figure), joined. */
        private static String joined(Map<String, Double> figures, String format, String separator) {
            StringJoiner joined = new StringJoiner(separator);
            figures.forEach(
                    (name, figure) -> joined.add(String.format(Locale.ROOT, format, name, figure)));
            return joined.toString();
        }
    }

    public String run() throws Exception {
        out.printf(
                "Overhead benchmark: %d records over %d keys, parallelism %d, %d B of state per key, checkpoint every %d ms, %d runs each, Clonos with %s%n",
                settings.records,
                settings.keys,
                settings.parallelism,
                settings.stateBytesPerKey,
                settings.checkpointIntervalMs,
                settings.repetitions,
                settings.clonosProperties.isEmpty()
                        ? "its defaults"
                        : settings.clonosProperties.toString());
        Variant[] variants = settings.variants.toArray(new Variant[0]);
        Run[][] runs = new Run[variants.length][settings.repetitions];
        if (settings.freshJvmPerRun) {
            out.printf(
                    "Each run in a JVM of its own; each sink's first %d ms not counted (warm-up)%s.%n",
                    settings.warmupMillis,
                    settings.warmupRate > 0
                            ? ", the sources held to "
                                    + settings.warmupRate
                                    + " records/s for all of it but its last "
                                    + SyntheticJob.WARM_UP_AT_FULL_SPEED_MILLIS
                                    + " ms"
                            : "");
        } else {
            out.println("All runs in this JVM. Warming up (not counted):");
            for (Variant variant : variants) {
                runOnce(variant, "warmup");
            }
        }
        // alternate the systems, so that a slow phase of the machine does not favour one, and
        // start each repetition with the next system, so that no system always runs in one place
        for (int i = 0; i < settings.repetitions; i++) {
            for (int k = 0; k < variants.length; k++) {
                int v = (i + k) % variants.length;
                runs[v][i] = runOnce(variants[v], String.valueOf(i + 1));
            }
        }
        Run flink = median(runs[0]);
        out.println();
        out.printf(
                "%-12s %22s %12s %22s %7s %7s %12s %10s %12s%n",
                "",
                "records/s (min-max)",
                "vs Flink",
                "paired (min-max)",
                "p50 ms",
                "p99 ms",
                "CPU us/rec",
                "det. B/rec",
                "log MB/task");
        StringBuilder json =
                new StringBuilder(
                        String.format(
                                Locale.ROOT,
                                "{\"benchmark\":\"%s\",\"records\":%d,\"warmup_ms\":%d,\"warmup_rate\":%d,\"checkpoint_interval_ms\":%d,\"clonos_settings\":\"%s\",\"variants\":[",
                                settings.name,
                                settings.records,
                                settings.warmupMillis,
                                settings.warmupRate,
                                settings.checkpointIntervalMs,
                                settings.clonosProperties));
        for (int v = 0; v < variants.length; v++) {
            Run m = median(runs[v]);
            double[] throughput = sorted(runs[v], r -> r.recordsPerSecond);
            // each repetition's run against Flink's run of the same repetition
            double[] paired = new double[settings.repetitions];
            for (int i = 0; i < settings.repetitions; i++) {
                paired[i] = runs[v][i].recordsPerSecond / runs[0][i].recordsPerSecond;
            }
            Arrays.sort(paired);
            out.printf(
                    Locale.ROOT,
                    "%-12s %9.0f (%.0f-%.0f) %12.3f %8.3f (%.3f-%.3f) %7d %7d %12.3f %10.2f %12.1f%n",
                    variants[v].label(),
                    m.recordsPerSecond,
                    throughput[0],
                    throughput[throughput.length - 1],
                    m.recordsPerSecond / flink.recordsPerSecond,
                    paired[paired.length / 2],
                    paired[0],
                    paired[paired.length - 1],
                    m.p50,
                    m.p99,
                    m.cpuMicrosPerRecord,
                    m.determinantBytesPerRecord,
                    maxOf(runs[v], r -> r.maxLogMemoryPerTask) / 1048576.0);
            json.append(v == 0 ? "" : ",")
                    .append(
                            String.format(
                                    Locale.ROOT,
                                    "{\"system\":\"%s\",\"median\":%s,\"throughput_ratio\":%.3f,\"paired_ratio_median\":%.3f,\"paired_ratio_min\":%.3f,\"paired_ratio_max\":%.3f,\"runs\":[",
                                    variants[v].label(),
                                    m.json(variants[v].label()),
                                    m.recordsPerSecond / flink.recordsPerSecond,
                                    paired[paired.length / 2],
                                    paired[0],
                                    paired[paired.length - 1]));
            for (int i = 0; i < settings.repetitions; i++) {
                json.append(i == 0 ? "" : ",").append(runs[v][i].json(variants[v].label()));
            }
            json.append("]}");
        }
        json.append("]}");
        printCpuByThreads(variants, runs);
        Files.createDirectories(settings.output);
        Files.writeString(settings.output.resolve("summary.json"), json + "\n");
        out.println(json);
        return json.toString();
    }

    /**
     * Where each system's steady-state CPU goes: per group of threads, the median over the
     * repetitions of nanoseconds per record.
     */
    private void printCpuByThreads(Variant[] variants, Run[][] runs) {
        Set<String> groups = new TreeSet<>();
        for (Run[] system : runs) {
            for (Run run : system) {
                groups.addAll(run.steadyCpuNanosPerRecordByThreads.keySet());
            }
        }
        if (groups.isEmpty()) {
            return;
        }
        out.println();
        out.println("Steady-state CPU, ns per record by threads (median of the runs):");
        out.printf("%-24s", "");
        for (Variant variant : variants) {
            out.printf("%12s", variant.label());
        }
        out.println();
        List<String> rows = new ArrayList<>(groups);
        rows.add("all");
        for (String group : rows) {
            out.printf("%-24s", group);
            for (Run[] system : runs) {
                double[] figures =
                        sorted(
                                system,
                                r ->
                                        group.equals("all")
                                                ? r.steadyCpuNanosPerRecord()
                                                : r.steadyCpuNanosPerRecordByThreads.getOrDefault(
                                                        group, 0.0));
                out.printf(Locale.ROOT, "%12.1f", figures[figures.length / 2]);
            }
            out.println();
        }
    }

    private static long maxOf(Run[] runs, ToLongFunction<Run> figure) {
        return Arrays.stream(runs).mapToLong(figure).max().orElse(0);
    }

    private static double[] sorted(Run[] runs, ToDoubleFunction<Run> figure) {
        return Arrays.stream(runs).mapToDouble(figure).sorted().toArray();
    }

    private static Run median(Run[] runs) {
        Run[] sorted = runs.clone();
        Arrays.sort(sorted, (a, b) -> Double.compare(a.recordsPerSecond, b.recordsPerSecond));
        return sorted[sorted.length / 2];
    }

    private Run runOnce(Variant variant, String repetition) throws Exception {
        Map<String, String> clonos = new LinkedHashMap<>(settings.clonosProperties);
        clonos.putAll(variant.properties());
        OverheadRun.Request request =
                new OverheadRun.Request(
                        settings.records,
                        settings.keys,
                        settings.parallelism,
                        settings.stateBytesPerKey,
                        settings.checkpointIntervalMs,
                        settings.warmupMillis,
                        settings.warmupRate,
                        settings.output.toString(),
                        variant.label(),
                        variant.clonos(),
                        clonos,
                        variant.fromJobJar(),
                        repetition);
        return settings.freshJvmPerRun
                ? OverheadRun.inFreshJvm(request, out)
                : OverheadRun.measure(request, out);
    }
}
