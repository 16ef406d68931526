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

import io.clonos.bench.report.FailurePlan;
import io.clonos.bench.report.RecoveryBreakdown;
import io.clonos.cli.ClonosHome;
import io.clonos.cli.HdfsProcess;
import io.clonos.cli.StandaloneCluster;
import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.client.deployment.StandaloneClusterId;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import org.apache.commons.io.FileUtils;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * {@code bin/clonos bench recovery --processes separate}: the synthetic job on a standalone cluster
 * of separate JVM processes, a TaskManager killed with SIGKILL, on Clonos and on vanilla Flink
 * 1.20.5 (Flink's own entrypoints, the same jars and configuration) in one run, the order of the
 * systems alternating between repetitions. Unlike the embedded benchmark, nobody tells the
 * JobManager of the loss: each system finds it as it would in production. Prints each run and the
 * medians with their spread, and writes {@code summary.json} (one object per run and the medians)
 * and {@code timeline.csv}.
 */
@Internal
public final class SeparateProcessRecovery {

    private static final String VICTIM_VERTEX = "stateful-map";
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(10);

    private final ClonosHome home;
    private final KillSettings settings;
    private final int taskManagers;
    private final Map<String, String> properties;
    private final FailurePlan failures;
    private final PrintStream out;

    /**
     * The input rate as a fraction of the capacity a first, unthrottled run measures; 0 for the
     * settings' rate as it is.
     */
    private final double load;

    /** The capacity measured for {@link #load}, records per second; -1 when none was measured. */
    private long capacity = -1;

    /**
     * Checkpoints to HDFS in a process of its own ({@link HdfsProcess}) instead of the config's.
     */
    private final boolean hdfs;

    /** Hadoop's jars for the cluster processes when {@link #hdfs}, else null. */
    private String hadoopClassPath;

    public SeparateProcessRecovery(
            ClonosHome home,
            KillSettings settings,
            int taskManagers,
            Map<String, String> properties,
            double load,
            boolean hdfs,
            FailurePlan failures,
            PrintStream out) {
        this.home = home;
        this.failures = failures;
        this.hdfs = hdfs;
        this.load = load;
        this.settings = settings;
        this.taskManagers = taskManagers;
        this.properties = properties;
        this.out = out;
    }

    /** One run of one system: its figures, and when the JobManager learnt of the loss. */
    private record Run(
            String system,
            int repetition,
            RecoveryFigures figures,
            long detectionMs,
            RecoveryBreakdown breakdown,
            int restarted,
            int subtasks) {}

    /** Runs both systems {@code settings.repetitions} times; returns the summary JSON. */
    public String run() throws Exception {
        if (!hdfs) {
            return runAll();
        }
        if (properties.containsKey("state.checkpoints.dir")) {
            throw new IllegalArgumentException(
                    "--hdfs chooses state.checkpoints.dir itself; do not set it with -D");
        }
        hadoopClassPath = HdfsProcess.classPath(home.home());
        try (HdfsProcess hdfsProcess =
                HdfsProcess.start(home.home(), settings.output.resolve("hdfs"))) {
            out.println("HDFS (NameNode and DataNode, one process) at " + hdfsProcess.uri());
            properties.put("state.checkpoints.dir", hdfsProcess.uri() + "/checkpoints");
            try {
                return runAll();
            } finally {
                properties.remove("state.checkpoints.dir");
            }
        }
    }

    private String runAll() throws Exception {
        if (load > 0) {
            capacity = measureCapacity();
            settings.rate = (int) Math.max(1, Math.round(capacity * load));
            out.printf(
                    Locale.ROOT,
                    "Capacity on Clonos, unthrottled: %d records/s; the input runs at %.2f of it, %d records/s%n",
                    capacity,
                    load,
                    settings.rate);
        }
        out.println(setup());
        Files.createDirectories(settings.output);
        List<Run> runs = new ArrayList<>();
        for (int repetition = 0; repetition < settings.repetitions; repetition++) {
            List<StandaloneCluster.Flavour> order =
                    repetition % 2 == 0
                            ? List.of(
                                    StandaloneCluster.Flavour.CLONOS,
                                    StandaloneCluster.Flavour.FLINK)
                            : List.of(
                                    StandaloneCluster.Flavour.FLINK,
                                    StandaloneCluster.Flavour.CLONOS);
            for (StandaloneCluster.Flavour flavour : order) {
                Run run = runOnce(flavour, repetition);
                runs.add(run);
                out.printf(
                        Locale.ROOT,
                        "[%s #%d] %d of %d subtasks restarted, detection %d ms, recovery %d ms (robust %d ms), first output of the lost keys after %d ms, longest output gap %d ms, lost %d, duplicated %d%n",
                        run.system,
                        repetition,
                        run.restarted,
                        run.subtasks,
                        run.detectionMs,
                        run.figures.recoveryMs,
                        run.figures.robustRecoveryMs,
                        run.figures.recoveredTaskEmitsAfterMs,
                        run.figures.maxOutputGapMs,
                        run.figures.lost,
                        run.figures.duplicated);
                out.printf(
                        "[%s #%d] where the time went: %s%n",
                        run.system, repetition, run.breakdown.json());
            }
        }
        String json = summary(runs);
        Files.writeString(settings.output.resolve("summary.json"), json + "\n");
        List<String> timeline = new ArrayList<>();
        timeline.add(
                "mode,ms_since_kill,records,mean_latency_ms,affected_latency_ms,unaffected_latency_ms");
        for (Run run : runs) {
            for (String line : run.figures.timeline) {
                timeline.add(line.replaceFirst("^[^,]*", run.system + "-" + run.repetition));
            }
        }
        Files.write(settings.output.resolve("timeline.csv"), timeline);
        String table = medianTable(runs);
        out.println();
        out.print(table);
        Files.writeString(
                settings.output.resolve("recovery.html"),
                RecoveryPage.html(
                        setup(),
                        runs.stream()
                                .map(r -> new RecoveryPage.Run(r.system, r.repetition, r.figures))
                                .toList(),
                        table));
        out.println("Timelines: " + settings.output.resolve("recovery.html"));
        out.println("Summary: " + settings.output.resolve("summary.json"));
        out.println(json);
        return json;
    }

    /** The set-up in a sentence. */
    private String setup() {
        return String.format(
                Locale.ROOT,
                "Recovery on separate processes: %d records at %d/s over %d keys, %d KB of state per key, parallelism %d, checkpoints every %d ms to %s, %d TaskManagers, SIGKILL of %d TaskManager(s) (%s) after %d ms, %d repetition(s)",
                settings.records,
                settings.rate,
                settings.keys,
                settings.stateBytesPerKey / 1024,
                settings.parallelism,
                settings.checkpointIntervalMs,
                checkpointStorage(),
                taskManagers,
                failures.kills,
                failures.label(),
                settings.killAfterMs,
                settings.repetitions);
    }

    /** What runs on a started cluster: its REST client, its processes, its configuration. */
    @FunctionalInterface
    private interface OnCluster<T> {
        public T run(StandaloneCluster cluster, ClusterRestClient rest, Configuration config)
                throws Exception;
    }

    /** Starts a cluster of {@code flavour} with its files in {@code dir}, runs, stops it. */
    private <T> T onCluster(StandaloneCluster.Flavour flavour, Path dir, OnCluster<T> action)
            throws Exception {
        ClonosHome processes = home.withRunAndLogDirs(dir.resolve("run"), dir.resolve("log"));
        StandaloneCluster cluster = new StandaloneCluster(processes, out, flavour);
        if (hadoopClassPath != null) {
            cluster.withHadoop(hadoopClassPath);
        }
        Map<String, String> clusterProperties = new LinkedHashMap<>(properties);
        // the restart strategy is the configuration's (Flink's default: exponential delay); a
        // short fixed delay makes vanilla Flink spend its attempts on the killed TaskManager's
        // slots, which its JobManager holds until the heartbeat timeout
        clusterProperties.putIfAbsent("cluster.evenly-spread-out-slots", "true");
        cluster.start(clusterProperties, taskManagers, settings.parallelism);
        try {
            Configuration config = processes.loadConfiguration(clusterProperties);
            return action.run(cluster, StandaloneCluster.restClient(config), config);
        } finally {
            cluster.stop();
        }
    }

    /**
     * Records per second the job sustains unthrottled on Clonos's cluster (the system under test,
     * whose causal logging costs more than Flink's run), from the first to the last arrival.
     */
    long measureCapacity() throws Exception {
        Path dir = settings.output.resolve("capacity");
        Path probes = Files.createDirectories(dir.resolve("probes"));
        return onCluster(
                StandaloneCluster.Flavour.CLONOS,
                dir,
                (cluster, rest, config) -> {
                    int rate = settings.rate;
                    settings.rate = 0;
                    String job;
                    try {
                        job = submitBenchmark(config, SyntheticJob.build(settings, probes), dir);
                    } finally {
                        settings.rate = rate;
                    }
                    awaitEnd(rest, job);
                    List<long[]> received = SyntheticJob.received(probes);
                    FileUtils.deleteDirectory(probes.toFile());
                    long first = received.stream().mapToLong(r -> r[3]).min().orElse(0);
                    long last = received.stream().mapToLong(r -> r[3]).max().orElse(0);
                    if (received.isEmpty() || last <= first) {
                        throw new IllegalStateException(
                                "The capacity run delivered too little to measure");
                    }
                    return received.size() * 1000L / (last - first);
                });
    }

    private Run runOnce(StandaloneCluster.Flavour flavour, int repetition) throws Exception {
        String system = flavour.name().toLowerCase(Locale.ROOT);
        Path dir = settings.output.resolve(system + "-" + repetition);
        Path probes = Files.createDirectories(dir.resolve("probes"));
        return onCluster(
                flavour,
                dir,
                (cluster, rest, config) -> {
                    String job = submitBenchmark(config, SyntheticJob.build(settings, probes), dir);
                    rest.awaitCompletedCheckpoint(job, JOB_TIMEOUT);
                    long started = System.currentTimeMillis();
                    while (System.currentTimeMillis() - started < settings.killAfterMs) {
                        Thread.sleep(50);
                    }
                    Map<String, JsonNode> subtasks = rest.subtasks(job);
                    Map<String, String> taskManagerOf = new LinkedHashMap<>();
                    subtasks.forEach(
                            (name, subtask) ->
                                    taskManagerOf.put(
                                            name, subtask.path("taskmanager-id").asText()));
                    List<String> victims = failures.victims(taskManagerOf, VICTIM_VERTEX);
                    Set<Integer> affectedWindows = new HashSet<>();
                    subtasks.forEach(
                            (name, subtask) -> {
                                if (name.startsWith("window[")
                                        && victims.contains(taskManagerOf.get(name))) {
                                    affectedWindows.add(subtask.path("subtask").asInt());
                                }
                            });
                    List<ProcessHandle> processes = new ArrayList<>();
                    for (String victim : victims) {
                        processes.add(
                                cluster.process(victim)
                                        .orElseThrow(
                                                () ->
                                                        new IllegalStateException(
                                                                "No process runs TaskManager "
                                                                        + victim)));
                    }
                    if (!"RUNNING".equals(rest.jobState(job).orElse(""))) {
                        throw new IllegalStateException(
                                "The job ended before the TaskManager was to be killed: give it more"
                                        + " records (--records) or kill earlier (--kill-after)");
                    }
                    long killedAt = System.currentTimeMillis();
                    for (int i = 0; i < processes.size(); i++) {
                        while (System.currentTimeMillis() < killedAt + failures.offsetMs(i)) {
                            Thread.sleep(20);
                        }
                        processes.get(i).destroyForcibly();
                        out.printf(
                                Locale.ROOT,
                                "[%s #%d] SIGKILL %s (pid %d) %d ms after the first%n",
                                system,
                                repetition,
                                victims.get(i),
                                processes.get(i).pid(),
                                System.currentTimeMillis() - killedAt);
                    }
                    awaitEnd(rest, job);
                    OptionalLong detected = rest.firstExceptionAt(job, "");
                    Map<String, JsonNode> ended = rest.primarySubtasks(job);
                    int restarted =
                            (int)
                                    ended.values().stream()
                                            .filter(t -> t.path("attempt").asInt() > 0)
                                            .count();
                    List<long[]> received = SyntheticJob.received(probes);
                    FileUtils.deleteDirectory(probes.toFile());
                    RecoveryFigures figures =
                            RecoveryFigures.of(
                                    system, received, settings, killedAt, affectedWindows);
                    long detectedAt = detected.orElse(-1);
                    return new Run(
                            system,
                            repetition,
                            figures,
                            detectedAt < 0 ? -1 : detectedAt - killedAt,
                            RecoveryBreakdown.of(
                                    rest.replacementStates(job),
                                    killedAt,
                                    detectedAt,
                                    figures.recoveredTaskEmitsAfterMs < 0
                                            ? -1
                                            : killedAt + figures.recoveredTaskEmitsAfterMs,
                                    figures.robustRecoveryMs < 0
                                            ? -1
                                            : killedAt + figures.robustRecoveryMs),
                            restarted,
                            ended.size());
                });
    }

    /**
     * Submits the benchmark job with its classes as a job jar (written into {@code dir}): the
     * cluster's class path has only what a user's cluster has. Returns the job's id.
     */
    private static String submitBenchmark(Configuration config, JobGraph jobGraph, Path dir)
            throws Exception {
        jobGraph.addJar(new org.apache.flink.core.fs.Path(BenchmarkJobJar.write(dir).toUri()));
        return submit(config, jobGraph).toHexString();
    }

    /**
     * Submits a job to a standalone cluster through Flink's REST client (which uploads its jars).
     */
    public static JobID submit(Configuration config, JobGraph jobGraph) throws Exception {
        try (RestClusterClient<StandaloneClusterId> client =
                new RestClusterClient<>(config, StandaloneClusterId.getInstance())) {
            return client.submitJob(jobGraph).get(2, TimeUnit.MINUTES);
        }
    }

    private static void awaitEnd(ClusterRestClient rest, String job)
            throws InterruptedException, IOException {
        long deadline = System.currentTimeMillis() + JOB_TIMEOUT.toMillis();
        while (true) {
            String state = rest.jobState(job).orElse("UNKNOWN");
            if (state.equals("FINISHED")) {
                return;
            }
            if (state.equals("FAILED") || state.equals("CANCELED")) {
                throw new IllegalStateException(
                        "Job " + job + " ended " + state + lastException(rest, job));
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException(
                        "Job " + job + " did not end: " + state + lastException(rest, job));
            }
            Thread.sleep(200);
        }
    }

    /**
     * The job's latest exception, from its exception history, for a run that did not end (e.g. a
     * restart that keeps failing because no checkpoint directory is set).
     */
    private static String lastException(ClusterRestClient rest, String job)
            throws IOException, InterruptedException {
        List<String> exceptions = rest.exceptions(job);
        return exceptions.isEmpty()
                ? ""
                : "; its latest exception: " + exceptions.get(exceptions.size() - 1);
    }

    private String summary(List<Run> runs) {
        StringBuilder json = new StringBuilder("{\"benchmark\":\"recovery\",");
        json.append(
                String.format(
                        Locale.ROOT,
                        "\"setup\":{\"processes\":\"separate\",\"failure\":\"SIGKILL\",\"failures\":\"%s\",\"kills\":%d,\"kill_spacing_ms\":%d,\"state_mb\":%.1f,\"checkpoint_interval_ms\":%d,\"checkpoint_storage\":\"%s\",\"load\":%s,\"capacity\":%d,\"rate\":%d,\"records\":%d,\"parallelism\":%d,\"taskmanagers\":%d,\"repetitions\":%d},",
                        failures.label(),
                        failures.kills,
                        failures.spacingMs,
                        settings.keys * (double) settings.stateBytesPerKey / (1 << 20),
                        settings.checkpointIntervalMs,
                        checkpointStorage(),
                        load > 0 ? String.format(Locale.ROOT, "%.2f", load) : "null",
                        capacity,
                        settings.rate,
                        settings.records,
                        settings.parallelism,
                        taskManagers,
                        settings.repetitions));
        json.append("\"runs\":[");
        for (int i = 0; i < runs.size(); i++) {
            Run run = runs.get(i);
            json.append(i == 0 ? "" : ",")
                    .append(
                            String.format(
                                    Locale.ROOT,
                                    "{\"system\":\"%s\",\"repetition\":%d,\"subtasks_restarted\":%d,\"subtasks\":%d,\"detection_ms\":%d,\"figures\":%s,\"breakdown\":%s}",
                                    run.system,
                                    run.repetition,
                                    run.restarted,
                                    run.subtasks,
                                    run.detectionMs,
                                    run.figures.json(),
                                    run.breakdown.json()));
        }
        json.append("],");
        json.append("\"clonos\":").append(medians(runs, "clonos")).append(',');
        json.append("\"flink\":").append(medians(runs, "flink")).append('}');
        return json.toString();
    }

    /** Where the checkpoints went: hdfs, the JobManager's heap, or the configured URI's scheme. */
    private String checkpointStorage() {
        if (hdfs) {
            return "hdfs";
        }
        String dir = properties.get("state.checkpoints.dir");
        return dir == null ? "jobmanager" : dir.replaceFirst(":.*", "");
    }

    private static String medians(List<Run> runs, String system) {
        List<Run> of = runs.stream().filter(r -> r.system.equals(system)).toList();
        return String.format(
                Locale.ROOT,
                "{\"detection_ms\":%d,\"recovery_ms\":%d,\"recovery_robust_ms\":%d,\"first_output_ms\":%d,\"max_output_gap_ms\":%d,\"lost\":%d,\"duplicated\":%d,\"breakdown\":%s}",
                median(of, r -> r.detectionMs),
                median(of, r -> r.figures.recoveryMs),
                median(of, r -> r.figures.robustRecoveryMs),
                median(of, r -> r.figures.recoveredTaskEmitsAfterMs),
                median(of, r -> r.figures.maxOutputGapMs),
                median(of, r -> r.figures.lost),
                median(of, r -> r.figures.duplicated),
                RecoveryBreakdown.json(phase -> median(of, r -> r.breakdown.ms(phase))));
    }

    /** The medians with their spread, as printed. */
    private static String medianTable(List<Run> runs) {
        StringBuilder table = new StringBuilder();
        table.append(String.format("%-44s %22s %22s%n", "median (min-max)", "Clonos", "Flink"));
        row(table, runs, "subtasks restarted", r -> r.restarted);
        row(table, runs, "detection after SIGKILL (ms)", r -> r.detectionMs);
        row(table, runs, "recovery, latency within 10% (ms)", r -> r.figures.recoveryMs);
        row(table, runs, "recovery, robust (ms)", r -> r.figures.robustRecoveryMs);
        row(
                table,
                runs,
                "lost keys emit again after (ms)",
                r -> r.figures.recoveredTaskEmitsAfterMs);
        row(table, runs, "longest output gap (ms)", r -> r.figures.maxOutputGapMs);
        row(table, runs, "latency before the failure (ms)", r -> r.figures.baselineLatencyMs);
        row(table, runs, "records lost", r -> r.figures.lost);
        row(table, runs, "records duplicated", r -> r.figures.duplicated);
        table.append("where the time went (ms), to the last replacement in each state:\n");
        for (String phase : RecoveryBreakdown.PHASES) {
            row(table, runs, "  " + phase.replace('_', '-'), r -> r.breakdown.ms(phase));
        }
        return table.toString();
    }

    private static void row(
            StringBuilder table, List<Run> runs, String label, ToLongFunction<Run> figure) {
        table.append(
                String.format(
                        "%-44s %22s %22s%n",
                        label, spread(runs, "clonos", figure), spread(runs, "flink", figure)));
    }

    private static String spread(List<Run> runs, String system, ToLongFunction<Run> figure) {
        List<Run> of = runs.stream().filter(r -> r.system.equals(system)).toList();
        long min = of.stream().mapToLong(figure).min().orElse(-1);
        long max = of.stream().mapToLong(figure).max().orElse(-1);
        return median(of, figure) + " (" + min + "-" + max + ")";
    }

    private static long median(List<Run> runs, ToLongFunction<Run> figure) {
        long[] values = runs.stream().mapToLong(figure).sorted().toArray();
        if (values.length == 0) {
            return -1;
        }
        return values.length % 2 == 1
                ? values[values.length / 2]
                : (values[values.length / 2 - 1] + values[values.length / 2]) / 2;
    }
}
