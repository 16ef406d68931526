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

import io.clonos.runtime.minicluster.EmbeddedClusters;
import io.clonos.runtime.minicluster.EmbeddedTaskManagers;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecution;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;

/**
 * {@code bin/clonos bench standby}: the synthetic job with RocksDB state (incremental checkpoints)
 * on an embedded Clonos cluster of 3 TaskManagers, once with standby tasks and once without, in the
 * same run; once the state has grown and been checkpointed, the TaskManager that hosts the first
 * subtask of the stateful map is terminated. Reports, per run, the time from the failure's
 * detection (the failed attempt's FAILED) to the replacement running (its state restored), how long
 * the restore took (INITIALIZING to RUNNING), and when the replacement's first output reached the
 * sink; ends with one JSON line.
 */
@Internal
public final class StandbyBenchmark {

    /**
     * The benchmark's defaults: 200 KB for each of 512 keys per subtask, 100 MB of state per task.
     */
    public static KillSettings defaults() {
        KillSettings settings =
                new KillSettings(
                        12_000,
                        400,
                        1_024,
                        200 * 1024,
                        2_000,
                        15_000,
                        Path.of("bench-results", "standby"));
        settings.repetitions = 3;
        return settings;
    }

    private final KillSettings settings;
    private final PrintStream out;

    public StandbyBenchmark(KillSettings settings, PrintStream out) {
        this.settings = settings;
        this.out = out;
    }

    /**
     * Runs with and without standbys, {@code repetitions} times each, alternating which goes first
     * (the first failure a JVM recovers from runs cold code); returns the JSON line it printed
     * last, with the median of each figure.
     */
    public String run() throws Exception {
        long stateMb =
                (long) settings.keys
                        / settings.parallelism
                        * settings.stateBytesPerKey
                        / (1024 * 1024);
        out.printf(
                "Standby benchmark: %d records at %d/s over %d keys, parallelism %d, %d KB per key (%d MB of RocksDB state per task), checkpoint every %d ms to %s, TaskManager killed after %d ms, %d repetitions%n",
                settings.records,
                settings.rate,
                settings.keys,
                settings.parallelism,
                settings.stateBytesPerKey / 1024,
                stateMb,
                settings.checkpointIntervalMs,
                settings.checkpointDir == null ? "a local directory" : settings.checkpointDir,
                settings.killAfterMs,
                settings.repetitions);
        List<Figures> standby = new ArrayList<>();
        List<Figures> fresh = new ArrayList<>();
        for (int i = 0; i < settings.repetitions; i++) {
            for (boolean withStandby :
                    i % 2 == 0 ? new boolean[] {true, false} : new boolean[] {false, true}) {
                Figures figures = runOnce(withStandby);
                out.printf("[%s] %s%n", withStandby ? "standby" : "no standby", figures.json());
                (withStandby ? standby : fresh).add(figures);
            }
        }
        Figures withStandby = Figures.median(standby);
        Figures without = Figures.median(fresh);

        out.println();
        out.printf(
                "%-70s %14s %14s%n",
                "median of " + settings.repetitions, "with standby", "without");
        row(
                "failure detected -> replacement running (ms)",
                withStandby.detectedToRunningMs,
                without.detectedToRunningMs);
        row("  of which restoring the state (ms)", withStandby.restoreMs, without.restoreMs);
        row(
                "failure detected -> first record processed by the replacement (ms)",
                withStandby.detectedToFirstRecordMs,
                without.detectedToFirstRecordMs);
        row(
                "failure detected -> first output of the replacement at the sink (ms)",
                withStandby.detectedToFirstOutputMs,
                without.detectedToFirstOutputMs);
        String json =
                "{\"benchmark\":\"standby\",\"stateMbPerTask\":"
                        + stateMb
                        + ",\"repetitions\":"
                        + settings.repetitions
                        + ",\"checkpoints\":\""
                        + (settings.checkpointDir == null ? "local" : settings.checkpointDir)
                        + "\""
                        + ",\"standby\":"
                        + withStandby.json()
                        + ",\"withoutStandby\":"
                        + without.json()
                        + ",\"runs\":{\"standby\":"
                        + Figures.json(standby)
                        + ",\"withoutStandby\":"
                        + Figures.json(fresh)
                        + "}}";
        Files.createDirectories(settings.output);
        Files.writeString(settings.output.resolve("summary.json"), json + "\n");
        out.println(json);
        return json;
    }

    private void row(String label, long withStandby, long without) {
        out.printf("%-70s %14d %14d%n", label, withStandby, without);
    }

    private Figures runOnce(boolean withStandby) throws Exception {
        String mode = withStandby ? "standby" : "no standby";
        Path work = Files.createTempDirectory("clonos-standby-bench");
        Path probes = work.resolve("probes");
        Configuration config = EmbeddedClusters.killConfiguration();
        // activation is measured, not the restart strategy's back-off (the same in both runs)
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ZERO);
        config.setString("state.backend.type", "rocksdb");
        config.setString("state.backend.incremental", "true");
        config.setString(
                "state.checkpoints.dir",
                settings.checkpointDir == null
                        ? work.resolve("checkpoints").toUri().toString()
                        : settings.checkpointDir.replaceAll("/+$", "") + "/" + work.getFileName());
        config.setString("io.tmp.dirs", Files.createDirectories(work.resolve("tmp")).toString());
        config.setString("clonos.standby.enabled", String.valueOf(withStandby));
        try (MiniCluster cluster = EmbeddedClusters.start(true, config, 3, settings.parallelism)) {
            JobID job = cluster.submitJob(SyntheticJob.build(settings, probes)).get().getJobID();
            long started = System.currentTimeMillis();
            out.printf("[%s] running; the TaskManager goes in %d ms%n", mode, settings.killAfterMs);
            while (System.currentTimeMillis() - started < settings.killAfterMs) {
                Thread.sleep(50);
            }
            int subtask = withStandby ? subtaskWithStandbyElsewhere(cluster, job) : 0;
            AccessExecutionGraph graph = cluster.getExecutionGraph(job).get();
            AccessExecutionVertex map =
                    EmbeddedClusters.vertex(graph, "stateful-map").getTaskVertices()[subtask];
            String victim =
                    map.getCurrentAssignedResourceLocation().getResourceID().getResourceIdString();
            int index = EmbeddedTaskManagers.indexOf(cluster, victim);
            cluster.terminateTaskManager(index).get();
            out.printf(
                    "[%s] terminated TaskManager %d (%s); waiting for the job to finish%n",
                    mode, index, victim);
            if (!cluster.requestJobResult(job).get(10, TimeUnit.MINUTES).isSuccess()) {
                throw new IllegalStateException("The " + mode + " run failed");
            }
            AccessExecutionVertex recovered =
                    EmbeddedClusters.vertex(
                                    cluster.getArchivedExecutionGraph(job).get(), "stateful-map")
                            .getTaskVertices()[subtask];
            return figures(recovered, probes);
        }
    }

    /**
     * A subtask of the stateful map whose standby runs on another TaskManager (spread placement is
     * best effort: a standby stays next to its primary when the job has no free slot elsewhere).
     */
    static int subtaskWithStandbyElsewhere(MiniCluster cluster, JobID job) throws Exception {
        long deadline = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < deadline) {
            AccessExecutionGraph graph = cluster.getExecutionGraph(job).get();
            AccessExecutionVertex[] primaries =
                    EmbeddedClusters.vertex(graph, "stateful-map").getTaskVertices();
            AccessExecutionVertex[] standbys =
                    EmbeddedClusters.vertex(graph, "Standby: stateful-map").getTaskVertices();
            for (int i = 0; i < primaries.length; i++) {
                if (primaries[i].getExecutionState() == ExecutionState.RUNNING
                        && standbys[i].getExecutionState() == ExecutionState.RUNNING
                        && !primaries[i]
                                .getCurrentAssignedResourceLocation()
                                .getResourceID()
                                .equals(
                                        standbys[i]
                                                .getCurrentAssignedResourceLocation()
                                                .getResourceID())) {
                    return i;
                }
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException(
                "No standby of the stateful map runs on another TaskManager than its primary");
    }

    private Figures figures(AccessExecutionVertex recovered, Path probes) throws IOException {
        AccessExecution replacement = recovered.getCurrentExecutionAttempt();
        if (replacement.getAttemptNumber() == 0) {
            throw new IllegalStateException("The stateful map's first subtask did not fail");
        }
        AccessExecution failed =
                recovered
                        .getExecutionHistory()
                        .getHistoricalExecution(replacement.getAttemptNumber() - 1)
                        .orElseThrow(
                                () -> new IllegalStateException("No record of the failed attempt"));
        // the failed attempt ends FAILED (or CANCELED, when the JobManager cancels the rest of a
        // lost TaskManager's tasks); without either, the replacement's creation is the detection
        long detected =
                Math.max(
                        failed.getStateTimestamp(ExecutionState.FAILED),
                        failed.getStateTimestamp(ExecutionState.CANCELED));
        if (detected == 0) {
            detected = replacement.getStateTimestamp(ExecutionState.CREATED);
        }
        long running = replacement.getStateTimestamp(ExecutionState.RUNNING);
        long initializing = replacement.getStateTimestamp(ExecutionState.INITIALIZING);
        // the replacement's first output: the first record of a key it owns that arrived after the
        // failure
        int subtask = recovered.getParallelSubtaskIndex();
        int maxParallelism =
                KeyGroupRangeAssignment.computeDefaultMaxParallelism(settings.parallelism);
        long since = detected;
        long firstOutput =
                SyntheticJob.received(probes).stream()
                        .filter(r -> r[3] > since)
                        .filter(
                                r ->
                                        KeyGroupRangeAssignment.assignKeyToParallelOperator(
                                                        r[0], maxParallelism, settings.parallelism)
                                                == subtask)
                        .mapToLong(r -> r[3])
                        .min()
                        .orElse(-1);
        Long firstProcessed =
                SyntheticJob.firstProcessed(probes)
                        .get(
                                SyntheticJob.StatefulMap.firstProcessedKey(
                                        subtask, replacement.getAttemptNumber()));
        return new Figures(
                running - since,
                running - initializing,
                firstProcessed == null ? -1 : firstProcessed - since,
                firstOutput < 0 ? -1 : firstOutput - since);
    }

    private record Figures(
            long detectedToRunningMs,
            long restoreMs,
            long detectedToFirstRecordMs,
            long detectedToFirstOutputMs) {
        String json() {
            return "{\"detectedToRunningMs\":"
                    + detectedToRunningMs
                    + ",\"restoreMs\":"
                    + restoreMs
                    + ",\"detectedToFirstRecordMs\":"
                    + detectedToFirstRecordMs
                    + ",\"detectedToFirstOutputMs\":"
                    + detectedToFirstOutputMs
                    + "}";
        }

        static String json(List<Figures> runs) {
            return runs.stream().map(Figures::json).collect(Collectors.joining(",", "[", "]"));
        }

        /** Each figure's median over {@code runs} (the lower middle one of an even count). */
        static Figures median(List<Figures> runs) {
            return new Figures(
                    median(runs, Figures::detectedToRunningMs),
                    median(runs, Figures::restoreMs),
                    median(runs, Figures::detectedToFirstRecordMs),
                    median(runs, Figures::detectedToFirstOutputMs));
        }

        private static long median(List<Figures> runs, ToLongFunction<Figures> figure) {
            long[] sorted = runs.stream().mapToLong(figure).sorted().toArray();
            return sorted[(sorted.length - 1) / 2];
        }
    }
}
