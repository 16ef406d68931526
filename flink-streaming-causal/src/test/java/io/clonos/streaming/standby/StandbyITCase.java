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

package io.clonos.streaming.standby;

import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.minicluster.EmbeddedTaskManagers;
import io.clonos.runtime.standby.StandbyVertices;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.ClusterOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecution;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionJobVertex;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.util.Collector;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Standby tasks on a real cluster: with {@code clonos.standby.enabled} every subtask gets an idle
 * standby in a slot of its own, which keeps local copies of its primary's checkpointed state, and
 * which ends when the job does.
 */
class StandbyITCase {

    private static final int PARALLELISM = 2;

    @TempDir Path work;

    @Test
    void standbysHoldTheirPrimariesLatestStateAndEndWithTheJob() throws Exception {
        Path tmp = Files.createDirectories(work.resolve("tmp"));
        Configuration config = new Configuration();
        config.set(RestOptions.BIND_PORT, "0");
        config.set(ClusterOptions.EVENLY_SPREAD_OUT_SLOTS_STRATEGY, true);
        config.setString("clonos.standby.enabled", "true");
        config.setString("io.tmp.dirs", tmp.toString());
        config.setString("state.checkpoints.dir", work.resolve("checkpoints").toUri().toString());
        config.setString("state.checkpoint-storage", "filesystem");
        // every piece of state in a file, none inlined in the checkpoint's metadata
        config.setString("state.storage.fs.memory-threshold", "0");
        try (ClonosMiniCluster cluster = ClonosMiniCluster.create(config, 3, 2)) {
            cluster.start();
            JobID job = cluster.submitJob(jobGraph()).get().getJobID();
            CompletableFuture<?> result = cluster.requestJobResult(job);

            List<Path> copies = awaitStandbyCopies(tmp, job, result);

            assertThat(result.get(120, TimeUnit.SECONDS))
                    .satisfies(
                            r ->
                                    assertThat(
                                                    ((org.apache.flink.runtime.jobmaster.JobResult)
                                                                    r)
                                                            .isSuccess())
                                            .isTrue());
            assertThat(copies)
                    .as("local copies of checkpointed state on the standbys' side")
                    .isNotEmpty();
            AccessExecutionGraph graph = cluster.getArchivedExecutionGraph(job).get();
            List<String> standbyVertices = new ArrayList<>();
            for (AccessExecutionJobVertex vertex : graph.getVerticesTopologically()) {
                if (vertex.getName().startsWith(StandbyVertices.NAME_PREFIX)) {
                    standbyVertices.add(vertex.getName());
                    for (AccessExecutionVertex subtask : vertex.getTaskVertices()) {
                        assertThat(subtask.getExecutionState())
                                .as(subtask.getTaskNameWithSubtaskIndex())
                                .isEqualTo(ExecutionState.FINISHED);
                    }
                }
            }
            assertThat(standbyVertices).as("one standby vertex per vertex").hasSize(3);
            try (Stream<Path> left = Files.walk(tmp.resolve("clonos-standby"))) {
                assertThat(left.filter(Files::isRegularFile))
                        .as("standbys delete their copies when they end")
                        .isEmpty();
            }
        }
    }

    /**
     * A cluster without slots for the standbys: their slot requests fail, they are tried again
     * later, and the job runs, and ends, without them.
     */
    @Test
    void withoutSlotsForStandbysTheJobRunsWithoutThem() throws Exception {
        Configuration config = new Configuration();
        config.set(RestOptions.BIND_PORT, "0");
        config.setString("clonos.standby.enabled", "true");
        config.setString("slot.request.timeout", "2 s");
        config.setString("io.tmp.dirs", Files.createDirectories(work.resolve("tmp")).toString());
        try (ClonosMiniCluster cluster = ClonosMiniCluster.create(config, 1, PARALLELISM)) {
            cluster.start();
            JobID job = cluster.submitJob(jobGraph()).get().getJobID();

            assertThat(
                            ((org.apache.flink.runtime.jobmaster.JobResult)
                                            cluster.requestJobResult(job)
                                                    .get(120, TimeUnit.SECONDS))
                                    .isSuccess())
                    .isTrue();
        }
    }

    /**
     * Under {@code spread} (the default) every standby runs on another TaskManager than its
     * primary, although Flink placed some next to theirs; after a TaskManager is lost, the standbys
     * of the subtasks it hosted are activated, and new standbys appear, spread again.
     */
    @Test
    void standbysRunAwayFromTheirPrimariesAndAreReplacedAfterATaskManagerIsLost() throws Exception {
        Configuration config = new Configuration();
        config.set(RestOptions.BIND_PORT, "0");
        config.setString("clonos.standby.enabled", "true");
        config.setString("io.tmp.dirs", Files.createDirectories(work.resolve("tmp")).toString());
        config.setString("state.checkpoints.dir", work.resolve("checkpoints").toUri().toString());
        config.setString("state.checkpoint-storage", "filesystem");
        config.setString("restart-strategy.type", "fixed-delay");
        config.setString("restart-strategy.fixed-delay.attempts", "10");
        config.setString("restart-strategy.fixed-delay.delay", "0 ms");
        // three TaskManagers of four slots: Flink's default slot matching fills the first one
        // with the primaries and their standbys, so the standbys have to move; there is room to
        // spread before and after one TaskManager is lost
        try (ClonosMiniCluster cluster = ClonosMiniCluster.create(config, 3, 4)) {
            cluster.start();
            JobID job = cluster.submitJob(jobGraph(60_000)).get().getJobID();

            Map<String, String> before = awaitSpread(cluster, job, 0);
            String lost = before.get("count (1/2)");
            cluster.terminateTaskManager(EmbeddedTaskManagers.indexOf(cluster, lost)).get();

            Map<String, String> after = awaitSpread(cluster, job, 1);
            assertThat(after.get("count (1/2)"))
                    .as("the replacement runs where its standby was")
                    .isEqualTo(before.get("Standby: count (1/2)"));
            assertThat(after.values())
                    .as("nothing runs on the lost TaskManager")
                    .doesNotContain(lost);
            cluster.cancelJob(job).get();
        }
    }

    /**
     * TaskManagers of one slot: the replacements of a lost TaskManager's subtasks take their
     * standbys' slot, whose standbys make room and are deployed again on the spare TaskManager, but
     * only {@code clonos.standby.redeploy-delay} after the replacements run: a new standby fetches
     * its primary's whole state, which must not compete with the replacements' restore ({@link
     * Count} makes that restore slow) and catch-up.
     */
    @Test
    void displacedStandbysAreDeployedAgainOnceTheReplacementsRun() throws Exception {
        Configuration config = new Configuration();
        config.set(RestOptions.BIND_PORT, "0");
        config.setString("clonos.standby.enabled", "true");
        Path tmp = Files.createDirectories(work.resolve("tmp"));
        config.setString("io.tmp.dirs", tmp.toString());
        config.setString("state.checkpoints.dir", work.resolve("checkpoints").toUri().toString());
        config.setString("state.checkpoint-storage", "filesystem");
        config.setString("state.storage.fs.memory-threshold", "0");
        config.setString("restart-strategy.type", "fixed-delay");
        config.setString("restart-strategy.fixed-delay.attempts", "10");
        config.setString("restart-strategy.fixed-delay.delay", "0 ms");
        config.setString("clonos.standby.redeploy-delay", REDEPLOY_DELAY_MILLIS + " ms");
        // two slots of primaries, two of standbys, one spare
        try (ClonosMiniCluster cluster = ClonosMiniCluster.create(config, 5, 1)) {
            cluster.start();
            JobID job = cluster.submitJob(jobGraph(60_000)).get().getJobID();

            Map<String, String> before = awaitSpread(cluster, job, 0);
            assertThat(awaitStandbyCopies(tmp, job, cluster.requestJobResult(job)))
                    .as("the standbys hold a checkpoint")
                    .isNotEmpty();
            int standbyAttempt =
                    subtask(cluster.getExecutionGraph(job).get(), STANDBY_OF_COUNT)
                            .getCurrentExecutionAttempt()
                            .getAttemptNumber();
            cluster.terminateTaskManager(
                            EmbeddedTaskManagers.indexOf(cluster, before.get("count (1/2)")))
                    .get();

            Map<String, String> after = awaitSpread(cluster, job, 1);
            assertThat(after.get("count (1/2)"))
                    .as("the replacement runs where its standby was")
                    .isEqualTo(before.get(STANDBY_OF_COUNT));
            AccessExecutionGraph graph = cluster.getExecutionGraph(job).get();
            assertThat(
                            subtask(graph, "count (2/2)")
                                    .getCurrentExecutionAttempt()
                                    .getAttemptNumber())
                    .as("a local recovery: the other subtask kept running")
                    .isZero();
            long replacementRan =
                    attempt(graph, "count (1/2)", 1).getStateTimestamp(ExecutionState.RUNNING);
            long standbyDeployed =
                    attempt(graph, STANDBY_OF_COUNT, standbyAttempt + 1)
                            .getStateTimestamp(ExecutionState.DEPLOYING);
            assertThat(standbyDeployed)
                    .as(
                            "the displaced standby is deployed again clonos.standby.redeploy-delay after the replacement runs")
                    .isGreaterThanOrEqualTo(replacementRan + REDEPLOY_DELAY_MILLIS);
            cluster.cancelJob(job).get();
        }
    }

    /**
     * Waits until every subtask runs, the lost TaskManager's subtasks in attempt {@code attempt},
     * and every standby on another TaskManager than its primary; returns where each runs (task name
     * with subtask -> TaskManager).
     */
    private static Map<String, String> awaitSpread(
            ClonosMiniCluster cluster, JobID job, int attempt) throws Exception {
        return StandbyPlacement.awaitSpread(
                cluster,
                job,
                AccessExecutionVertex::getTaskNameWithSubtaskIndex,
                graph -> countAttempt(graph) >= attempt,
                Duration.ofSeconds(40));
    }

    private static final long REDEPLOY_DELAY_MILLIS = 2_000;

    private static final String STANDBY_OF_COUNT = StandbyVertices.NAME_PREFIX + "count (1/2)";

    /** A subtask by its name with subtask index. */
    private static AccessExecutionVertex subtask(AccessExecutionGraph graph, String name) {
        for (AccessExecutionJobVertex vertex : graph.getVerticesTopologically()) {
            for (AccessExecutionVertex subtask : vertex.getTaskVertices()) {
                if (subtask.getTaskNameWithSubtaskIndex().equals(name)) {
                    return subtask;
                }
            }
        }
        throw new AssertionError("no subtask " + name);
    }

    /** An attempt of a subtask, current or past. */
    private static AccessExecution attempt(AccessExecutionGraph graph, String name, int number) {
        AccessExecutionVertex subtask = subtask(graph, name);
        if (subtask.getCurrentExecutionAttempt().getAttemptNumber() == number) {
            return subtask.getCurrentExecutionAttempt();
        }
        return subtask.getExecutionHistory()
                .getHistoricalExecution(number)
                .orElseThrow(() -> new AssertionError("no attempt " + number + " of " + name));
    }

    /** The attempt of the first subtask of {@code count}; -1 before the job's graph is there. */
    private static int countAttempt(AccessExecutionGraph graph) {
        for (AccessExecutionJobVertex vertex : graph.getVerticesTopologically()) {
            if (vertex.getName().equals("count")) {
                return vertex.getTaskVertices()[0].getCurrentExecutionAttempt().getAttemptNumber();
            }
        }
        return -1;
    }

    /** Waits until the standbys copied state files, while the job runs. */
    private static List<Path> awaitStandbyCopies(Path tmp, JobID job, CompletableFuture<?> result)
            throws Exception {
        Path standbys = tmp.resolve("clonos-standby").resolve(job.toHexString());
        while (!result.isDone()) {
            if (Files.isDirectory(standbys)) {
                try (Stream<Path> files = Files.walk(standbys)) {
                    List<Path> copies = files.filter(Files::isRegularFile).toList();
                    if (!copies.isEmpty()) {
                        return copies;
                    }
                }
            }
            Thread.sleep(20);
        }
        return List.of();
    }

    private static org.apache.flink.runtime.jobgraph.JobGraph jobGraph() {
        return jobGraph(6_000);
    }

    /** {@code records} numbers at 1,000 per second, counted per key. */
    private static org.apache.flink.runtime.jobgraph.JobGraph jobGraph(long records) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARALLELISM);
        env.enableCheckpointing(200);
        env.fromSource(
                        new DataGeneratorSource<>(
                                n -> n, records, RateLimiterStrategy.perSecond(1_000), Types.LONG),
                        WatermarkStrategy.noWatermarks(),
                        "numbers")
                .keyBy(n -> n % 16)
                .process(new Count())
                .name("count")
                .addSink(new DiscardingSink<>())
                .name("discard")
                .disableChaining();
        return env.getStreamGraph().getJobGraph();
    }

    /**
     * Keyed state that grows with every record. Replacements take longer to open than {@code
     * StandbyCoordination.STANDBY_PROVISION_DELAY}.
     */
    static final class Count extends KeyedProcessFunction<Long, Long, Long> {
        static final long REPLACEMENT_OPEN_MILLIS = 3_000;

        private transient ValueState<Long> count;

        @Override
        public void open(OpenContext openContext) throws InterruptedException {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
            if (getRuntimeContext().getTaskInfo().getAttemptNumber() > 0) {
                // a replacement restores slowly, as one with real state does
                Thread.sleep(REPLACEMENT_OPEN_MILLIS);
            }
        }

        @Override
        public void processElement(Long value, Context ctx, Collector<Long> out) throws Exception {
            long next = (count.value() == null ? 0 : count.value()) + 1;
            count.update(next);
            out.collect(next);
        }
    }
}
