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
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.util.FileUtils;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@code bin/clonos bench recovery}: the synthetic job on an embedded cluster of 3 TaskManagers,
 * once on Clonos and once on vanilla Flink 1.20.5 in the same run; after a warm-up the TaskManager
 * that hosts the first subtask of the stateful map is terminated. Prints a table, writes a CSV
 * timeline, and ends with one JSON line of the figures. Lost records are counted among all but the
 * last second of each source subtask's records (those may sit in the last window when the input
 * ends).
 */
@Internal
public final class RecoveryBenchmark {

    /** The benchmark's defaults. */
    public static KillSettings defaults() {
        return new KillSettings(
                60_000, 3_000, 64, 16 * 1024, 1_000, 8_000, Path.of("bench-results", "recovery"));
    }

    private final KillSettings settings;
    private final PrintStream out;

    public RecoveryBenchmark(KillSettings settings, PrintStream out) {
        this.settings = settings;
        this.out = out;
    }

    /** Runs Clonos and Flink; returns the JSON line it printed last. */
    public String run() throws Exception {
        out.printf(
                "Recovery benchmark: %d records at %d/s over %d keys, parallelism %d, %d KB of state per key, checkpoint every %d ms, TaskManager killed after %d ms%n",
                settings.records,
                settings.rate,
                settings.keys,
                settings.parallelism,
                settings.stateBytesPerKey / 1024,
                settings.checkpointIntervalMs,
                settings.killAfterMs);
        RecoveryFigures clonos = runOnce(true);
        RecoveryFigures flink = runOnce(false);

        out.println();
        out.printf("%-38s %12s %12s%n", "", "Clonos", "Flink");
        row("latency before the failure (ms)", clonos.baselineLatencyMs, flink.baselineLatencyMs);
        row(
                "recovered task emits again after (ms)",
                clonos.recoveredTaskEmitsAfterMs,
                flink.recoveredTaskEmitsAfterMs);
        row("recovery time, latency within 10% (ms)", clonos.recoveryMs, flink.recoveryMs);
        row(
                "  same, unaffected keys only (ms)",
                clonos.unaffectedRecoveryMs,
                flink.unaffectedRecoveryMs);
        row(
                "longest stall of unaffected keys (ms)",
                clonos.unaffectedMaxStallMs,
                flink.unaffectedMaxStallMs);
        row("records lost", clonos.lost, flink.lost);
        row("records duplicated", clonos.duplicated, flink.duplicated);

        Files.createDirectories(settings.output);
        List<String> timeline = new ArrayList<>();
        timeline.add(
                "mode,ms_since_kill,records,mean_latency_ms,affected_latency_ms,unaffected_latency_ms");
        timeline.addAll(clonos.timeline);
        timeline.addAll(flink.timeline);
        Files.write(settings.output.resolve("timeline.csv"), timeline);
        String json =
                "{\"benchmark\":\"recovery\",\"clonos\":"
                        + clonos.json()
                        + ",\"flink\":"
                        + flink.json()
                        + "}";
        Files.writeString(settings.output.resolve("summary.json"), json + "\n");
        out.println("Timeline: " + settings.output.resolve("timeline.csv"));
        out.println(json);
        return json;
    }

    private void row(String label, long clonos, long flink) {
        out.printf("%-38s %12d %12d%n", label, clonos, flink);
    }

    private RecoveryFigures runOnce(boolean onClonos) throws Exception {
        String mode = onClonos ? "clonos" : "flink";
        Path probes = Files.createTempDirectory("clonos-recovery-probes");
        Configuration config = EmbeddedClusters.killConfiguration();
        try (MiniCluster cluster =
                EmbeddedClusters.start(onClonos, config, 3, settings.parallelism)) {
            JobID job = cluster.submitJob(SyntheticJob.build(settings, probes)).get().getJobID();
            long started = System.currentTimeMillis();
            out.printf("[%s] running; the TaskManager goes in %d ms%n", mode, settings.killAfterMs);
            while (System.currentTimeMillis() - started < settings.killAfterMs) {
                Thread.sleep(50);
            }
            AccessExecutionGraph graph = cluster.getExecutionGraph(job).get();
            String victim = EmbeddedClusters.location(graph, "stateful-map", 0);
            Set<Integer> affectedWindows = subtasksOn(graph, "window", victim);
            int index = EmbeddedTaskManagers.indexOf(cluster, victim);
            long killedAt = System.currentTimeMillis();
            cluster.terminateTaskManager(index).get();
            out.printf(
                    "[%s] terminated TaskManager %d (%s); waiting for the job to finish%n",
                    mode, index, victim);
            if (!cluster.requestJobResult(job).get(10, TimeUnit.MINUTES).isSuccess()) {
                throw new IllegalStateException("The " + mode + " run failed");
            }
            List<long[]> received = SyntheticJob.received(probes);
            FileUtils.deleteDirectory(probes.toFile());
            return RecoveryFigures.of(mode, received, settings, killedAt, affectedWindows);
        }
    }

    private static Set<Integer> subtasksOn(
            AccessExecutionGraph graph, String vertexName, String taskManager) {
        Set<Integer> subtasks = new HashSet<>();
        for (AccessExecutionVertex v :
                EmbeddedClusters.vertex(graph, vertexName).getTaskVertices()) {
            if (v.getCurrentAssignedResourceLocation()
                    .getResourceID()
                    .getResourceIdString()
                    .equals(taskManager)) {
                subtasks.add(v.getParallelSubtaskIndex());
            }
        }
        return subtasks;
    }
}
