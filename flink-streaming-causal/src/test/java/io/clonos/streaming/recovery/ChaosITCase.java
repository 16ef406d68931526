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

package io.clonos.streaming.recovery;

import io.clonos.examples.CommittedLinesSink;
import io.clonos.examples.GeneratedJob;
import io.clonos.examples.Shape;
import io.clonos.examples.chaos.ChaosPlan;
import io.clonos.examples.chaos.ChaosVerdict;
import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.minicluster.EmbeddedTaskManagers;
import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Property-based recovery on the embedded cluster: each seed draws a job graph (depth 2 to 7;
 * forward, keyBy, rebalance and rescale edges; stateful stages with and without processing-time
 * timers, stateless ones; parallelism 1 to 4), a determinant sharing depth (1, 2 or full) and one
 * to three TaskManagers lost at once or 1-5 s apart ({@link ChaosPlan}); four TaskManagers of two
 * slots, slots spread. Each run must be exactly once, restart only the lost TaskManagers' subtasks
 * unless the documented fallback condition holds (and then name it), and end within its bound
 * ({@link ChaosVerdict}). A seed that fails is named in the failure and reproduces it; {@code
 * bin/clonos chaos} runs random seeds against separate TaskManager processes killed with SIGKILL.
 */
class ChaosITCase {

    private static final int TASK_MANAGERS = 4;
    private static final int SLOTS = 2;

    @TempDir Path work;

    private ClonosMiniCluster cluster;

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Seeds 2 and 4 read with readers that interleave four splits each, as Kafka's do. */
    @ParameterizedTest(name = "seed {0}, {1} split(s) per source subtask")
    @CsvSource({"1, 1", "2, 4", "4, 4"})
    void seededRunIsExactlyOnceLocalAndInTime(long seed, int splits) throws Exception {
        run(ChaosPlan.of(seed, TASK_MANAGERS, SLOTS).withSplitsPerSubtask(splits));
    }

    /** More seeds of {@link #seededRunIsExactlyOnceLocalAndInTime}, in the slow run. */
    @ParameterizedTest(name = "seed {0}, {1} split(s) per source subtask")
    @CsvSource({"3, 1", "5, 1"})
    @Tag("slow")
    void moreSeededRunsAreExactlyOnceLocalAndInTime(long seed, int splits) throws Exception {
        run(ChaosPlan.of(seed, TASK_MANAGERS, SLOTS).withSplitsPerSubtask(splits));
    }

    /**
     * The job's numbers from two sources chained to an operator that merges them, as their records
     * happen to be available: the merging task, lost with its TaskManager, takes its sources'
     * records in its predecessor's order again.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {7, 8, 9})
    void chainedSourcesOfALostTaskAreReplayedInTheirOrder(long seed) throws Exception {
        run(ChaosPlan.of(seed, TASK_MANAGERS, SLOTS).withChainedSources());
    }

    /** More seeds of {@link #chainedSourcesOfALostTaskAreReplayedInTheirOrder}, in the slow run. */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {11, 13})
    @Tag("slow")
    void moreChainedSourcesOfALostTaskAreReplayedInTheirOrder(long seed) throws Exception {
        run(ChaosPlan.of(seed, TASK_MANAGERS, SLOTS).withChainedSources());
    }

    /**
     * Event time: a timestamp assigner chained to the source's output, tumbling event-time windows,
     * an assigner behind a rebalance (its input interleaves subtasks that run apart, so records
     * come late for the windows behind it and leave through their late side output), windows again;
     * two TaskManagers lost 2 s apart, at the seed's time (one lost slice: {@code
     * EventTimeRecoveryITCase}, and {@code ChaosIT} with SIGKILL).
     */
    @ParameterizedTest(name = "seed {0}, {1} lost {2} ms apart")
    @CsvSource({"23, 2, 2000"})
    void eventTimeAssignersAndWindowsOfALostSliceAreReplayed(long seed, int kills, long stagger)
            throws Exception {
        Shape shape =
                Shape.parse(2, "forward:assign:2/keyby:window:2/rebalance:assign:2/keyby:window:2");
        run(ChaosPlan.fixed(seed, shape, -1, kills, stagger));
    }

    /**
     * Flink SQL stages (the planner's conversions and generated projection) behind a rebalance and
     * behind event-time windows, with the windows' event time carried through them; one TaskManager
     * lost, a slice of every stage.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {29})
    void sqlStagesOfALostSliceAreReplayed(long seed) throws Exception {
        Shape shape = Shape.parse(2, "rebalance:sql:2/keyby:window:2/forward:sql:2/keyby:state:2");
        run(ChaosPlan.fixed(seed, shape, -1, 1, 0));
    }

    /**
     * Two outputs of one producer merged into one task (Beam's Flatten), lost together with that
     * producer: the producer's regenerated buffers are cut elsewhere, so the merging task's replay
     * hands out one logged read in several parts, during which its other gate must wait. Seeds 10
     * and 12 fell back to a global rollback before.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {10, 12})
    void mergedOutputsOfALostProducerAreReplayedInTheirOrder(long seed) throws Exception {
        Shape shape = Shape.parse(2, "merge:map:2/keyby:state:2");
        run(ChaosPlan.fixed(seed, shape, -1, 1, 0));
    }

    /**
     * A stage of parallelism 1 lost with its TaskManager (seed 2 loses it), its restart delayed by
     * 2 s while checkpoints go on every 500 ms. Nothing waits for the lost stage's barriers, so a
     * checkpoint triggered once its attempt failed could complete, and Flink's plan would count
     * that attempt as finished; {@code ClonosCheckpointPlanPatch} refuses such plans (found by a
     * chaos run: the stage restarted finished, its input lost). The window in which a trigger meets
     * a failed attempt is short and not forced here; {@code ClonosCheckpointPlanPatchTest} covers
     * the rule itself.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {2})
    void aWholeStageLostWhileCheckpointsGoOnRestartsWithItsState(long seed) throws Exception {
        Shape shape = Shape.parse(2, "keyby:state:1/keyby:state:2");
        run(ChaosPlan.fixed(seed, shape, -1, 1, 0), Map.of("clonos.recovery.restart-delay", "2 s"));
    }

    private void run(ChaosPlan plan) throws Exception {
        run(plan, Map.of());
    }

    private void run(ChaosPlan plan, Map<String, String> settings) throws Exception {
        long seed = plan.seed;
        System.out.println("chaos " + plan);
        Map<String, String> config = new HashMap<>(settings);
        config.put("clonos.determinant-sharing-depth", String.valueOf(plan.dsd));
        cluster = RecoveryClusters.start(Configuration.fromMap(config), TASK_MANAGERS, SLOTS, 10);
        ClusterRestClient rest = new ClusterRestClient(cluster.getRestAddress().get());

        Path output = Files.createDirectories(work.resolve("links"));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        GeneratedJob.build(
                env,
                plan.shape,
                plan.count,
                ChaosPlan.RATE,
                500,
                plan.splitsPerSubtask,
                output.toString());
        JobID job = cluster.submitJob(env.getStreamGraph().getJobGraph()).get().getJobID();
        long started = System.nanoTime();
        awaitFirstCheckpoint(rest, job.toHexString());
        Map<String, Integer> taskManagers = awaitTaskManagers();

        List<Set<String>> lost = new ArrayList<>();
        long lastLoss = 0;
        for (long delay : plan.killDelays) {
            Thread.sleep(delay);
            Map<Integer, Set<String>> hosted =
                    hostedSubtasks(cluster.getExecutionGraph(job).get(), taskManagers);
            if (hosted.isEmpty()) {
                break;
            }
            int victim =
                    Integer.parseInt(
                            plan.nextVictim(
                                    new ArrayList<>(
                                            new TreeMap<>(hosted)
                                                    .keySet().stream()
                                                            .map(String::valueOf)
                                                            .toList())));
            lost.add(hosted.get(victim));
            cluster.terminateTaskManager(victim).get();
            lastLoss = System.nanoTime();
            System.out.println(
                    "chaos seed "
                            + seed
                            + ": lost TaskManager "
                            + victim
                            + " with "
                            + hosted.get(victim));
        }
        assertThat(lost).as("TaskManagers lost while the job ran").isNotEmpty();

        long remaining = plan.plannedMillis() - TimeUnit.NANOSECONDS.toMillis(lastLoss - started);
        long hardLimit =
                ChaosVerdict.boundAfterLastLoss(
                                plan, remaining, false, ChaosVerdict.RECOVERY_BOUND_MILLIS)
                        + 30_000;
        long after;
        try {
            cluster.requestJobResult(job).get(hardLimit, TimeUnit.MILLISECONDS);
            after = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastLoss);
        } catch (TimeoutException e) {
            after = -1;
        }
        AccessExecutionGraph finished =
                after < 0
                        ? cluster.getExecutionGraph(job).get()
                        : cluster.getArchivedExecutionGraph(job).get();
        ChaosVerdict verdict =
                ChaosVerdict.judge(
                        plan,
                        Attempts.numbers(finished),
                        lost,
                        rest.exceptions(job.toHexString()),
                        CommittedLinesSink.committedLines(output),
                        after,
                        remaining,
                        ChaosVerdict.RECOVERY_BOUND_MILLIS);
        System.out.println("chaos seed " + seed + ": " + verdict.summary());
        assertThat(verdict.problems).as("chaos " + plan + " (reproduce with this seed)").isEmpty();
    }

    private static void awaitFirstCheckpoint(ClusterRestClient rest, String job) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (rest.completedCheckpoints(job) < 1 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(rest.completedCheckpoints(job))
                .as("checkpoints before the first loss")
                .isPositive();
    }

    /** Every TaskManager's start index by resource id, once all have registered. */
    private Map<String, Integer> awaitTaskManagers() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (EmbeddedTaskManagers.indexes(cluster).size() < TASK_MANAGERS
                && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        Map<String, Integer> indexes = EmbeddedTaskManagers.indexes(cluster);
        assertThat(indexes).as("registered TaskManagers").hasSize(TASK_MANAGERS);
        return indexes;
    }

    /** Per TaskManager (start index) that runs subtasks of the job: their names. */
    private static Map<Integer, Set<String>> hostedSubtasks(
            AccessExecutionGraph graph, Map<String, Integer> taskManagers) {
        Map<String, Set<String>> byResource = new TreeMap<>();
        for (AccessExecutionVertex vertex : graph.getAllExecutionVertices()) {
            if (vertex.getExecutionState() == ExecutionState.RUNNING
                    || vertex.getExecutionState() == ExecutionState.INITIALIZING
                    || vertex.getExecutionState() == ExecutionState.DEPLOYING) {
                String resource =
                        vertex.getCurrentAssignedResourceLocation()
                                .getResourceID()
                                .getResourceIdString();
                byResource
                        .computeIfAbsent(resource, r -> new TreeSet<>())
                        .add(Attempts.subtaskName(vertex));
            }
        }
        Map<Integer, Set<String>> byIndex = new TreeMap<>();
        for (Map.Entry<String, Set<String>> entry : byResource.entrySet()) {
            byIndex.put(taskManagers.get(entry.getKey()), entry.getValue());
        }
        return byIndex;
    }
}
