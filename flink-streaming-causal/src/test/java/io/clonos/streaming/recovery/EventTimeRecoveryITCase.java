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
import io.clonos.examples.EventTimeWindowJob;
import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.minicluster.EmbeddedTaskManagers;
import io.clonos.runtime.protocol.FailTaskRequest;
import io.clonos.runtime.protocol.SchedulerEndpoint;

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.SerializedValue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The event-time job of Flink's documentation ({@link EventTimeWindowJob}: a timestamp assigner and
 * watermark generator chained to a FLIP-27 source, event-time windows, a rebalanced map, a keyed
 * stateful operator) loses the TaskManager of its source's subtask 0, a slice of every stage, on
 * four TaskManagers with slots spread. Only that TaskManager's subtasks restart, once; every (key,
 * window) result is committed exactly once with the result its events give; the job ends within a
 * bound after the loss.
 */
class EventTimeRecoveryITCase {

    private static final long COUNT = 9_000;
    private static final int RATE = 500;
    private static final int KEYS = 8;

    @TempDir Path work;

    private ClonosMiniCluster cluster;

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A whole slice: consecutive failed tasks, which only a full sharing depth covers. */
    @Test
    void lostSliceOfAnEventTimeJobRecoversLocally() throws Exception {
        cluster = SliceRecoveryITCase.spreadCluster("-1");
        Path output = Files.createDirectories(work.resolve("windows"));
        JobID job = submit(output);
        Attempts.Slice slice =
                Attempts.sliceOf(cluster.getExecutionGraph(job).get(), "Source: source");
        String lost = slice.taskManager();
        Set<String> onLost = slice.subtasks();
        assertThat(onLost).as("the lost TaskManager holds a slice of every stage").hasSize(4);
        long killed = System.nanoTime();
        cluster.terminateTaskManager(EmbeddedTaskManagers.indexOf(cluster, lost)).get();

        // what was left to generate, and 15 s for the recovery
        long bound = COUNT / (2L * RATE) + 15;
        assertThat(cluster.requestJobResult(job).get(bound + 60, TimeUnit.SECONDS).isSuccess())
                .isTrue();
        long took = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - killed);
        assertRecoveredExactlyOnce(job, output, onLost);
        assertThat(took).as("seconds from the loss to the job's end").isLessThanOrEqualTo(bound);
    }

    /**
     * One failed task, which a sharing depth of 1 covers: the assigner's task (its watermarks are
     * replayed) or the windows' (their event-time timers fire where they fired).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"Source: source -> assigner", "windows"})
    void failedTaskOfAnEventTimeJobRecoversLocallyAtSharingDepthOne(String vertex)
            throws Exception {
        cluster = SliceRecoveryITCase.spreadCluster("1");
        Path output = Files.createDirectories(work.resolve("windows"));
        JobID job = submit(output);
        cluster.deliverCoordinationRequestToCoordinator(
                        job,
                        SchedulerEndpoint.OPERATOR_ID,
                        new SerializedValue<>(new FailTaskRequest(vertex, 0)))
                .get(1, TimeUnit.MINUTES);
        assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess()).isTrue();
        assertRecoveredExactlyOnce(job, output, Set.of(vertex + "[0]"));
    }

    /** Submits the job; returns once windows fired: the assigner's watermarks moved. */
    private JobID submit(Path output) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        EventTimeWindowJob.build(env, COUNT, RATE, KEYS, 500, output.toString());
        JobID job = cluster.submitJob(env.getStreamGraph().getJobGraph()).get().getJobID();
        SliceRecoveryITCase.awaitCommittedLinks(output, KEYS * 2L);
        return job;
    }

    private void assertRecoveredExactlyOnce(JobID job, Path output, Set<String> restarted)
            throws Exception {
        AccessExecutionGraph finished = cluster.getArchivedExecutionGraph(job).get();
        assertThat(SliceRecoveryITCase.restartedSubtasks(finished))
                .as(() -> "only the failed subtasks restart, once; " + Attempts.why(finished))
                .isEqualTo(restarted);
        assertThat(
                        EventTimeWindowJob.violations(
                                CommittedLinesSink.committedLines(output), COUNT, KEYS))
                .as("windows lost, repeated or wrong")
                .isEmpty();
    }
}
