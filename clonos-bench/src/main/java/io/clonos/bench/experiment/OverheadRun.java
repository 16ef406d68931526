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

import io.clonos.bench.probe.DeterminantBytesReporter;
import io.clonos.bench.stats.ThreadCpuSampler;
import io.clonos.runtime.minicluster.EmbeddedClusters;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.util.FileUtils;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.PrintStream;
import java.io.Serializable;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * One run of the overhead benchmark: one system's embedded cluster runs the synthetic job once.
 *
 * <p>By default each run has a JVM of its own ({@link #inFreshJvm}), as JMH forks: in a JVM shared
 * by all runs, the JIT compiles Flink's code once for every system, with call sites that see
 * Flink's classes and Clonos's subclasses alike, and every run inherits the heap and the compiled
 * code of the runs before it, so a system's figure depended on which systems ran before it and on
 * how long the JVM had run.
 */
@Internal
final class OverheadRun {

    /** What a run measures: the job's settings and the system. */
    record Request(
            long records,
            int keys,
            int parallelism,
            int stateBytesPerKey,
            long checkpointIntervalMs,
            long warmupMillis,
            int warmupRate,
            String output,
            String label,
            boolean clonos,
            Map<String, String> clonosProperties,
            boolean fromJobJar,
            String repetition)
            implements Serializable {}

    private OverheadRun() {}

    /** Runs {@code request} in this JVM. */
    static OverheadBenchmark.Run measure(Request request, PrintStream out) throws Exception {
        Path probes = Files.createTempDirectory("clonos-overhead-probes");
        Configuration config = new Configuration();
        if (request.clonos()) {
            request.clonosProperties().forEach(config::setString);
        }
        DeterminantBytesReporter.configure(config, probes);
        Path memory = Paths.get(request.output()).resolve("log-memory");
        Files.createDirectories(memory);
        Path timeline =
                memory.resolve(
                        request.label().replace(' ', '-') + "-" + request.repetition() + ".csv");
        InFlightMemoryReporter.configure(config, timeline);
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean)
                        ManagementFactory.getOperatingSystemMXBean();
        long cpuBefore;
        long cpuNanos;
        ThreadCpuSampler threads = ThreadCpuSampler.start();
        try {
            try (MiniCluster cluster =
                    EmbeddedClusters.start(request.clonos(), config, 2, request.parallelism())) {
                JobGraph jobGraph =
                        SyntheticJob.buildSteadyState(
                                request.records(),
                                request.keys(),
                                request.parallelism(),
                                request.stateBytesPerKey(),
                                request.checkpointIntervalMs(),
                                request.warmupMillis(),
                                request.warmupRate(),
                                probes);
                if (request.fromJobJar()) {
                    jobGraph.addJar(
                            new org.apache.flink.core.fs.Path(
                                    BenchmarkJobJar.write(probes).toUri()));
                }
                cpuBefore = os.getProcessCpuTime();
                JobID job = cluster.submitJob(jobGraph).get().getJobID();
                if (!cluster.requestJobResult(job).get(30, TimeUnit.MINUTES).isSuccess()) {
                    throw new IllegalStateException("The " + request.label() + " run failed");
                }
            }
            // the cluster is closed: every task ended and reported; the JVM's CPU time covers the
            // cluster's threads (all in this process) for the whole job, warm-up included
            cpuNanos = os.getProcessCpuTime() - cpuBefore;
        } finally {
            // a failed run's sampler stops too (--one-jvm runs the next one in this JVM)
            threads.close();
        }
        long records = Math.max(1, request.records());
        Map<String, Double> bytesByKind = new TreeMap<>();
        DeterminantBytesReporter.endedTasksBytesByKind(probes)
                .forEach((kind, bytes) -> bytesByKind.put(kind, bytes / (double) records));
        long determinantBytes = DeterminantBytesReporter.endedTasksBytes(probes);
        SteadyStateSink.Steady steady = SteadyStateSink.Steady.read(probes);
        FileUtils.deleteDirectory(probes.toFile());
        long[] logs = InFlightMemoryReporter.maxPerTask(timeline);
        ThreadCpuSampler.Window window = threads.between(steady.first(), steady.last());
        Map<String, Double> cpuByThreads = window.nanosPerElement(steady.recordsPerSecond());
        OverheadBenchmark.Run run =
                new OverheadBenchmark.Run(
                        steady.recordsPerSecond(),
                        steady.latencies().quantile(0.5),
                        steady.latencies().quantile(0.99),
                        determinantBytes / (double) records,
                        bytesByKind,
                        cpuNanos / 1000.0 / records,
                        (steady.last() - steady.first()) / 1000.0,
                        logs[0],
                        logs[1],
                        cpuByThreads);
        out.printf(
                Locale.ROOT,
                "[%s] %.0f records/s over %.1f s of steady state, latency p50 %d ms, p99 %d ms, %.3f us CPU per record, %.2f determinant bytes per record%s, in-flight logs at most %.1f MB in memory and %.1f MB on disk per task; steady-state CPU ns per record by threads: %s%n",
                request.label(),
                run.recordsPerSecond,
                run.steadySeconds,
                run.p50,
                run.p99,
                run.cpuMicrosPerRecord,
                run.determinantBytesPerRecord,
                bytesByKind.isEmpty() ? "" : " (" + run.byKind("%s %.3f", ", ") + ")",
                run.maxLogMemoryPerTask / 1048576.0,
                run.maxLogDiskPerTask / 1048576.0,
                run.byThreads("%s %.0f", ", "));
        return run;
    }

    /**
     * Runs {@code request} in a new JVM with this JVM's options and class path; its output goes to
     * {@code out}.
     */
    static OverheadBenchmark.Run inFreshJvm(Request request, PrintStream out) throws Exception {
        Path exchange = Files.createTempDirectory("clonos-overhead-run");
        try {
            Path requestFile = exchange.resolve("request.bin");
            Path resultFile = exchange.resolve("result.bin");
            try (ObjectOutputStream o =
                    new ObjectOutputStream(Files.newOutputStream(requestFile))) {
                o.writeObject(request);
            }
            List<String> command = new ArrayList<>();
            command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
            command.add("-cp");
            command.add(System.getProperty("java.class.path"));
            command.add(OverheadRun.class.getName());
            command.add(requestFile.toString());
            command.add(resultFile.toString());
            Process process =
                    new ProcessBuilder(command)
                            .redirectErrorStream(true)
                            .redirectInput(ProcessBuilder.Redirect.INHERIT)
                            .start();
            List<String> tail = new ArrayList<>();
            try (BufferedReader lines =
                    new BufferedReader(
                            new InputStreamReader(
                                    process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    if (line.startsWith("[" + request.label() + "]")) {
                        out.println(line);
                    }
                    tail.add(line);
                    if (tail.size() > 20) {
                        tail.remove(0);
                    }
                }
            }
            int exit = process.waitFor();
            if (exit != 0 || !Files.exists(resultFile)) {
                throw new IllegalStateException(
                        "The "
                                + request.label()
                                + " run's JVM exited with "
                                + exit
                                + "; its last lines:\n"
                                + String.join("\n", tail));
            }
            try (ObjectInputStream in = new ObjectInputStream(Files.newInputStream(resultFile))) {
                return (OverheadBenchmark.Run) in.readObject();
            }
        } finally {
            FileUtils.deleteDirectory(exchange.toFile());
        }
    }

    /** The entry point of a run's own JVM: the request's file, and where the result goes. */
    public static void main(String[] args) throws Exception {
        Request request;
        try (ObjectInputStream in =
                new ObjectInputStream(Files.newInputStream(Paths.get(args[0])))) {
            request = (Request) in.readObject();
        }
        int exit = 0;
        try {
            OverheadBenchmark.Run run = measure(request, System.out);
            try (ObjectOutputStream o =
                    new ObjectOutputStream(Files.newOutputStream(Paths.get(args[1])))) {
                o.writeObject(run);
            }
        } catch (Throwable t) {
            t.printStackTrace(System.out);
            // last, so that the parent's tail of this output has them
            for (Throwable cause = t; cause != null; cause = cause.getCause()) {
                System.out.println("The run failed: " + cause);
            }
            exit = 1;
        }
        System.out.flush();
        // the embedded cluster's non-daemon threads must not keep this JVM alive
        System.exit(exit);
    }
}
