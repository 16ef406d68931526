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

package io.clonos.cli.bench;


import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * {@code bin/clonos bench overhead}: the synthetic job with an unthrottled source, on Clonos and on
 * vanilla Flink 1.20.5 in the same run, without failures: throughput and end-to-end latency, so
 * that the cost of Clonos in failure-free operation shows. Each system first runs once to warm up
 * the JVM (not counted), then {@code repetitions} times, alternating; the median run counts.
 */
@Internal
public final class OverheadBenchmark {

    /** The benchmark's knobs. */
    public static final class Settings {
        public long records = 3_000_000;
        public int keys = 64;
        public int parallelism = 2;
        public int stateBytesPerKey = 1024;
        public long checkpointIntervalMs = 1_000;
        public int repetitions = 3;
        public Path output = Path.of("bench-results", "overhead");
    }

    private final Settings settings;
    private final PrintStream out;

    public OverheadBenchmark(Settings settings, PrintStream out) {
        this.settings = settings;
        this.out = out;
    }

    /** One run's figures. */
    static final class Run {
        final double recordsPerSecond;
        final long p50;
        final long p99;

        Run(double recordsPerSecond, long p50, long p99) {
            this.recordsPerSecond = recordsPerSecond;
            this.p50 = p50;
            this.p99 = p99;
        }
    }

    public String run() throws Exception {
        out.printf(
                "Overhead benchmark: %d records over %d keys, parallelism %d, %d B of state per key, checkpoint every %d ms, %d runs each%n",
                settings.records, settings.keys, settings.parallelism, settings.stateBytesPerKey, settings.checkpointIntervalMs, settings.repetitions);
        Run[] clonos = new Run[settings.repetitions];
        Run[] flink = new Run[settings.repetitions];
        out.println("Warming up (not counted):");
        runOnce(true);
        runOnce(false);
        for (int i = 0; i < settings.repetitions; i++) {
            clonos[i] = runOnce(true);
            flink[i] = runOnce(false);
        }
        Run c = median(clonos);
        Run f = median(flink);
        out.println();
        out.printf("%-28s %14s %14s %10s%n", "", "Clonos", "Flink", "Clonos/Flink");
        out.printf(Locale.ROOT, "%-28s %14.0f %14.0f %10.3f%n", "throughput (records/s)", c.recordsPerSecond, f.recordsPerSecond, c.recordsPerSecond / f.recordsPerSecond);
        out.printf(Locale.ROOT, "%-28s %14d %14d%n", "latency p50 (ms)", c.p50, f.p50);
        out.printf(Locale.ROOT, "%-28s %14d %14d%n", "latency p99 (ms)", c.p99, f.p99);
        String json =
                String.format(
                        Locale.ROOT,
                        "{\"benchmark\":\"overhead\",\"clonos\":{\"records_per_s\":%.0f,\"latency_p50_ms\":%d,\"latency_p99_ms\":%d},\"flink\":{\"records_per_s\":%.0f,\"latency_p50_ms\":%d,\"latency_p99_ms\":%d},\"throughput_ratio\":%.3f}",
                        c.recordsPerSecond, c.p50, c.p99, f.recordsPerSecond, f.p50, f.p99, c.recordsPerSecond / f.recordsPerSecond);
        Files.createDirectories(settings.output);
        Files.writeString(settings.output.resolve("summary.json"), json + "\n");
        out.println(json);
        return json;
    }

    private static Run median(Run[] runs) {
        Run[] sorted = runs.clone();
        Arrays.sort(sorted, (a, b) -> Double.compare(a.recordsPerSecond, b.recordsPerSecond));
        return sorted[sorted.length / 2];
    }

    private Run runOnce(boolean onClonos) throws Exception {
        SyntheticJob.RECEIVED.clear();
        Configuration config = new Configuration();
        try (MiniCluster cluster = BenchmarkCluster.start(onClonos, config, 2, settings.parallelism)) {
            JobID job =
                    cluster.submitJob(SyntheticJob.build(settings.records, 0, settings.keys, settings.parallelism, settings.stateBytesPerKey, settings.checkpointIntervalMs))
                            .get()
                            .getJobID();
            if (!cluster.requestJobResult(job).get(30, TimeUnit.MINUTES).isSuccess()) {
                throw new IllegalStateException("The " + (onClonos ? "Clonos" : "Flink") + " run failed");
            }
        }
        long[] latencies = SyntheticJob.RECEIVED.stream().mapToLong(r -> r[3] - r[2]).sorted().toArray();
        long first = SyntheticJob.RECEIVED.stream().mapToLong(r -> r[2]).min().orElse(0);
        long last = SyntheticJob.RECEIVED.stream().mapToLong(r -> r[3]).max().orElse(1);
        Run run = new Run(latencies.length * 1000.0 / Math.max(1, last - first), latencies[latencies.length / 2], latencies[(int) (latencies.length * 0.99)]);
        out.printf(Locale.ROOT, "[%s] %.0f records/s, latency p50 %d ms, p99 %d ms%n", onClonos ? "clonos" : "flink", run.recordsPerSecond, run.p50, run.p99);
        return run;
    }
}
