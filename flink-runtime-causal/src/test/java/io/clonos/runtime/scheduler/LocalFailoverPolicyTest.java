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

package io.clonos.runtime.scheduler;

import io.clonos.runtime.causal.LocalRecoveryImpossibleException;
import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.configuration.ClonosOptions;
import io.clonos.runtime.jobgraph.VertexReplay;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.io.network.partition.PartitionNotFoundException;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobgraph.tasks.AbstractInvokable;
import org.apache.flink.runtime.operators.BatchTask;

import org.junit.jupiter.api.Test;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/** Which failures recover locally, and the reasons given for those that do not. */
class LocalFailoverPolicyTest {

    private static LocalFailoverPolicy<String> policy(String... keyValues) {
        Configuration configuration = new Configuration();
        for (int i = 0; i < keyValues.length; i += 2) {
            configuration.setString(keyValues[i], keyValues[i + 1]);
        }
        return new LocalFailoverPolicy<>(ClonosConfiguration.fromConfiguration(configuration));
    }

    private static JobVertex clonosVertex() {
        JobVertex vertex = new JobVertex("map");
        vertex.setInvokableClass(ClonosTask.class);
        return vertex;
    }

    /** Stands for a Clonos task: the policy knows them by their package. */
    private static final class ClonosTask extends AbstractInvokable {
        ClonosTask(Environment environment) {
            super(environment);
        }

        @Override
        public void invoke() {}
    }

    private static final Throwable CRASH = new RuntimeException("user code failed");
    private static final Throwable LOST_DETERMINANTS =
            new RuntimeException(
                    new LocalRecoveryImpossibleException("the log of epoch 3 is gone"));

    @Test
    void aClonosTaskOfARunningJobRecoversLocally() {
        assertThat(policy().whyNotLocal(JobStatus.RUNNING, clonosVertex(), CRASH)).isEmpty();
        assertThat(policy().whyNotLocal(JobStatus.RUNNING, clonosVertex(), null)).isEmpty();
    }

    @Test
    void everyOtherCaseNamesItsReason() {
        assertThat(
                        policy("clonos.recovery.mode", "global")
                                .whyNotLocal(JobStatus.RUNNING, clonosVertex(), CRASH))
                .hasValue(new LocalFailoverPolicy.NotLocal(null, "clonos.recovery.mode is global"));
        assertThat(policy().whyNotLocal(JobStatus.RESTARTING, clonosVertex(), CRASH))
                .hasValue(new LocalFailoverPolicy.NotLocal(null, "the job is RESTARTING"));
        assertThat(policy().whyNotLocal(JobStatus.RUNNING, clonosVertex(), LOST_DETERMINANTS))
                .hasValueSatisfying(
                        notLocal -> {
                            assertThat(notLocal.reason())
                                    .isEqualTo(GlobalFallbackCounter.Reason.REPLAY_IMPOSSIBLE);
                            assertThat(notLocal.why())
                                    .startsWith("an upstream task cannot replay")
                                    .contains("epoch 3");
                        });

        JobVertex flinkTask = new JobVertex("legacy");
        flinkTask.setInvokableClass(BatchTask.class);
        assertThat(policy().whyNotLocal(JobStatus.RUNNING, flinkTask, CRASH))
                .hasValue(
                        new LocalFailoverPolicy.NotLocal(
                                GlobalFallbackCounter.Reason.NOT_REPLAYABLE,
                                "its task org.apache.flink.runtime.operators.BatchTask is not a Clonos task"));

        JobVertex notReplayable = clonosVertex();
        VertexReplay.markNotReplayable(
                notReplayable.getConfiguration(), "its source reads splits in an unlogged order");
        assertThat(policy().whyNotLocal(JobStatus.RUNNING, notReplayable, CRASH))
                .hasValue(
                        new LocalFailoverPolicy.NotLocal(
                                GlobalFallbackCounter.Reason.NOT_REPLAYABLE,
                                "it cannot be recovered by determinants: its source reads splits in an unlogged order"));
    }

    @Test
    void withoutCausalLoggingATaskThatCannotReplayStillRestartsAlone() {
        JobVertex notReplayable = clonosVertex();
        VertexReplay.markNotReplayable(notReplayable.getConfiguration(), "whatever");
        notReplayable.getConfiguration().set(ClonosOptions.DETERMINANT_SHARING_DEPTH, 0);
        assertThat(policy().whyNotLocal(JobStatus.RUNNING, notReplayable, CRASH)).isEmpty();
    }

    @Test
    void lostDeterminantsRestartATaskAfreshOnlyWhereTheJobChoseAtLeastOnce() {
        LocalFailoverPolicy<String> atLeastOnce =
                policy("clonos.recovery.orphan-fallback", "at-least-once");
        assertThat(atLeastOnce.restartsAfresh(JobStatus.RUNNING, clonosVertex(), LOST_DETERMINANTS))
                .isTrue();
        assertThat(atLeastOnce.restartsAfresh(JobStatus.RUNNING, clonosVertex(), CRASH))
                .as("not a lost determinant")
                .isFalse();
        assertThat(
                        atLeastOnce.restartsAfresh(
                                JobStatus.RESTARTING, clonosVertex(), LOST_DETERMINANTS))
                .isFalse();
        Throwable partitionGone =
                new RuntimeException(
                        new LocalRecoveryImpossibleException(
                                "no producer",
                                new PartitionNotFoundException(new ResultPartitionID())));
        assertThat(atLeastOnce.restartsAfresh(JobStatus.RUNNING, clonosVertex(), partitionGone))
                .as("restarting brings no data back")
                .isFalse();
        assertThat(policy().restartsAfresh(JobStatus.RUNNING, clonosVertex(), LOST_DETERMINANTS))
                .as("the default rolls back")
                .isFalse();
    }

    @Test
    void aRollbackCountsAsAFallbackOnlyWhereLocalRecoveryWasExpected() {
        assertThat(policy().isFallback(JobStatus.RUNNING)).isTrue();
        assertThat(policy().isFallback(JobStatus.FAILING)).isFalse();
        assertThat(policy("clonos.recovery.mode", "global").isFallback(JobStatus.RUNNING))
                .isFalse();
    }

    // ------------------------------------------------------------------------------------------
    //  Batches: a -> b -> c, each of parallelism 2, all-to-all
    // ------------------------------------------------------------------------------------------

    private static final Map<String, Collection<String>> PIPELINE =
            Map.of(
                    "a0",
                    List.of("b0", "b1"),
                    "a1",
                    List.of("b0", "b1"),
                    "b0",
                    List.of("c0", "c1"),
                    "b1",
                    List.of("c0", "c1"),
                    "c0",
                    List.of(),
                    "c1",
                    List.of());
    private static final Set<String> ALL = PIPELINE.keySet();
    private static final Function<String, String> NAME = task -> "task " + task;

    /** No producer finished on a lost TaskManager. */
    private static final Function<String, Optional<String>> NONE_LOST = task -> Optional.empty();

    @Test
    void aTaskWhoseProducerFinishedOnTheLostTaskManagerFallsBack() {
        // b1 finished on the TaskManager that c1 was lost with: c1 cannot replay b1's output
        LocalFailoverPolicy.BatchVerdict<String> verdict =
                policy().judge(
                                Set.of("c1"),
                                5,
                                ALL,
                                PIPELINE::get,
                                task -> task.equals("c1") ? Optional.of("b1") : Optional.empty(),
                                NAME);
        assertThat(verdict.isLocal()).isFalse();
        assertThat(verdict.fallback()).isEqualTo(GlobalFallbackCounter.Reason.INPUT_LOST);
        assertThat(verdict.notLocal())
                .startsWith("the producer finished on a TaskManager that is lost: task b1 finished")
                .contains("task c1 would replay its input");
    }

    @Test
    void aLostSliceRecoversLocallyAtTheFullDepthAndNamesTheOrphanBelowIt() {
        LocalFailoverPolicy.BatchVerdict<String> full =
                policy().judge(Set.of("a0", "b0", "c0"), 5, ALL, PIPELINE::get, NONE_LOST, NAME);
        assertThat(full.isLocal()).isTrue();
        assertThat(full.restartAfresh()).isEmpty();
        assertThat(full.orphans()).isNull();

        LocalFailoverPolicy.BatchVerdict<String> dsd1 =
                policy("clonos.determinant-sharing-depth", "1")
                        .judge(Set.of("a0", "b0", "c0"), 5, ALL, PIPELINE::get, NONE_LOST, NAME);
        assertThat(dsd1.isLocal()).isFalse();
        assertThat(dsd1.fallback()).isEqualTo(GlobalFallbackCounter.Reason.BEYOND_DSD);
        assertThat(dsd1.notLocal())
                .isEqualTo(
                        "task a0 is an orphan: its output reached task c1, which kept running, 2 hops between TaskManagers downstream through failed tasks, "
                                + "and clonos.determinant-sharing-depth 1 shares its determinants 1 hops between TaskManagers");
        assertThat(dsd1.orphans())
                .as("named, so that the scheduler probes again before it rolls back")
                .isEqualTo(dsd1.notLocal());
    }

    @Test
    void withAtLeastOnceTheOrphansRestartAfreshInsteadOfARollback() {
        LocalFailoverPolicy.BatchVerdict<String> verdict =
                policy(
                                "clonos.determinant-sharing-depth",
                                "1",
                                "clonos.recovery.orphan-fallback",
                                "at-least-once")
                        .judge(Set.of("a0", "b0", "c0"), 5, ALL, PIPELINE::get, NONE_LOST, NAME);
        assertThat(verdict.isLocal()).isTrue();
        assertThat(verdict.restartAfresh()).containsExactly("a0");
        assertThat(verdict.orphans()).startsWith("task a0 is an orphan");
    }

    @Test
    void everyTaskDownIsARollback() {
        LocalFailoverPolicy.BatchVerdict<String> verdict =
                policy().judge(ALL, 5, ALL, PIPELINE::get, NONE_LOST, NAME);
        assertThat(verdict.isLocal()).isFalse();
        assertThat(verdict.fallback()).isEqualTo(GlobalFallbackCounter.Reason.NO_SURVIVOR);
        assertThat(verdict.notLocal()).contains("every task of the job");
        assertThat(verdict.orphans()).isNull();
    }

    @Test
    void tasksOfAnEarlierRecoveryCountAsDownUntilALaterCheckpointCompletes() {
        LocalFailoverPolicy<String> policy = policy("clonos.determinant-sharing-depth", "1");
        policy.restarted(List.of("a0"), 7);

        // a0 restored checkpoint 7 and may still wait for its determinants: with b0 lost now it
        // reaches c1 two hops away
        assertThat(policy.judge(Set.of("b0"), 7, ALL, PIPELINE::get, NONE_LOST, NAME).isLocal())
                .isFalse();
        assertThat(policy.stillRecovering()).containsExactly("a0");

        // checkpoint 8 completed: a0 took part in it, so it has its determinants
        assertThat(policy.judge(Set.of("b0"), 8, ALL, PIPELINE::get, NONE_LOST, NAME).isLocal())
                .isTrue();
        assertThat(policy.stillRecovering()).isEmpty();
    }

    /** Subtask i of every stage on TaskManager i: the slice lost with a TaskManager. */
    private static boolean sameTaskManager(String producer, String consumer) {
        return producer.charAt(1) == consumer.charAt(1);
    }

    @Test
    void aLostTaskManagersSliceRecoversLocallyAtDsd1UnlessEveryHopCounts() {
        Set<String> slice = Set.of("a0", "b0", "c0");
        LocalFailoverPolicy.BatchVerdict<String> free =
                policy("clonos.determinant-sharing-depth", "1")
                        .judge(
                                slice,
                                5,
                                ALL,
                                PIPELINE::get,
                                task -> false,
                                LocalFailoverPolicyTest::sameTaskManager,
                                NONE_LOST,
                                NAME);
        assertThat(free.isLocal()).isTrue();
        assertThat(free.orphans()).isNull();

        LocalFailoverPolicy.BatchVerdict<String> everyTask =
                policy(
                                "clonos.determinant-sharing-depth",
                                "1",
                                "clonos.determinant-sharing-hops",
                                "every-task")
                        .judge(
                                slice,
                                5,
                                ALL,
                                PIPELINE::get,
                                task -> false,
                                LocalFailoverPolicyTest::sameTaskManager,
                                NONE_LOST,
                                NAME);
        assertThat(everyTask.isLocal()).isFalse();
        assertThat(everyTask.notLocal())
                .isEqualTo(
                        "task a0 is an orphan: its output reached task c1, which kept running, 2 hops downstream through failed tasks, "
                                + "and clonos.determinant-sharing-depth 1 shares its determinants 1 hops");
    }

    /**
     * A task restarted since the latest completed checkpoint may have run elsewhere through the
     * epochs a recovery replays: hops to and from it count, wherever it runs now.
     */
    @Test
    void hopsOfATaskRestartedSinceTheLatestCheckpointCount() {
        LocalFailoverPolicy<String> policy = policy("clonos.determinant-sharing-depth", "1");
        policy.restarted(List.of("b0"), 7);
        LocalFailoverPolicy.BatchVerdict<String> verdict =
                policy.judge(
                        Set.of("a0", "c0"),
                        7,
                        ALL,
                        PIPELINE::get,
                        task -> false,
                        LocalFailoverPolicyTest::sameTaskManager,
                        NONE_LOST,
                        NAME);
        assertThat(verdict.isLocal()).isFalse();
        assertThat(verdict.notLocal()).startsWith("task a0 is an orphan");

        // checkpoint 8 completed: b0 has run where it runs now since before it
        assertThat(
                        policy.judge(
                                        Set.of("a0", "b0", "c0"),
                                        8,
                                        ALL,
                                        PIPELINE::get,
                                        task -> false,
                                        LocalFailoverPolicyTest::sameTaskManager,
                                        NONE_LOST,
                                        NAME)
                                .isLocal())
                .isTrue();
    }

    /** A task that fails again before its recovery completed a checkpoint repeats a failure. */
    @Test
    void aFailureBeforeTheRecoveryCompletedACheckpointRepeats() {
        LocalFailoverPolicy<String> policy = policy();
        assertThat(policy.failsAgainBeforeACheckpoint("a0", 7)).as("never restarted").isFalse();
        policy.restarted(List.of("a0"), 7);
        assertThat(policy.failsAgainBeforeACheckpoint("a0", 7)).isTrue();
        assertThat(policy.failsAgainBeforeACheckpoint("b0", 7)).isFalse();
        assertThat(policy.failsAgainBeforeACheckpoint("a0", 8))
                .as("checkpoint 8 completed since the restart")
                .isFalse();
    }
}
