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
import io.clonos.runtime.protocol.FailTaskRequest;
import io.clonos.runtime.protocol.SchedulerEndpoint;

import org.apache.flink.api.common.JobID;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionJobVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.SerializedValue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.annotation.Nullable;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A job started from a savepoint at another parallelism is covered as any other: the event-time job
 * ({@link EventTimeWindowJob}) runs at parallelism 3, stops with a savepoint half-way, goes on from
 * it at parallelism 2, and there a task fails once the rescaled job checkpointed. Only that task
 * restarts, and across the savepoint and the failure every (key, window) result is committed
 * exactly once.
 *
 * <p>The source keeps parallelism 2 when the rest of the job goes from 3 to 2: a source reader that
 * restored two splits reads them one after the other, and with the watermarks generated behind the
 * source the second split's events can fall behind the first one's watermark and are dropped as
 * late, on Flink itself (3 of 8 runs without Clonos and without a failure lost windows so), which
 * no recovery can tell from the job's own result.
 */
class RescaledRestoreITCase {

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

    @Test
    void aFailedTaskOfAJobRescaledFromASavepointRecoversLocally() throws Exception {
        cluster = SliceRecoveryITCase.spreadCluster("-1");
        Path output = Files.createDirectories(work.resolve("windows"));

        String savepoint = runAndStopWithSavepoint(3, 2, output);
        int beforeRescaling = CommittedLinesSink.committedLines(output).size();
        assertThat(
                        EventTimeWindowJob.violations(
                                CommittedLinesSink.committedLines(output), COUNT, KEYS))
                .as("the first run stopped before the last window")
                .isNotEmpty();

        JobID rescaled = cluster.submitJob(jobGraph(2, 2, output, savepoint)).get().getJobID();
        // the rescaled job completed a checkpoint of its own and committed with it
        JobProgress.awaitCheckpoints(cluster, rescaled, 1);
        SliceRecoveryITCase.awaitCommittedLinks(output, beforeRescaling + 1);
        failWindowsAndAwaitTheEnd(rescaled);
        AccessExecutionGraph finished = cluster.getArchivedExecutionGraph(rescaled).get();
        assertThat(finished.getAllVertices().values())
                .as("the rescaled job's windows")
                .filteredOn(vertex -> vertex.getName().equals("windows"))
                .singleElement()
                .extracting(AccessExecutionJobVertex::getParallelism)
                .isEqualTo(2);
        assertThat(SliceRecoveryITCase.restartedSubtasks(finished))
                .as(() -> "only the failed subtask restarts, once; " + Attempts.why(finished))
                .isEqualTo(Set.of("windows[0]"));
        assertThat(
                        EventTimeWindowJob.violations(
                                CommittedLinesSink.committedLines(output), COUNT, KEYS))
                .as("windows lost, repeated or wrong, across the savepoint and the failure")
                .isEmpty();
    }

    /**
     * Rescaled up, the source has fewer splits than subtasks: its third subtask finishes at once,
     * and a consumer of it fails once the job checkpointed. Whether that subtask finished before
     * the checkpoint (a local recovery) or after (its partition is gone: a global rollback), the
     * job ends, every window exactly once; it does not wait for the finished producer for ever.
     * Tagged slow: the consumer's requests for the released partition take some 30 s to fail.
     */
    @Test
    @Tag("slow")
    void aConsumerOfASourceSubtaskWithoutSplitsThatFinishedStillRecovers() throws Exception {
        cluster = SliceRecoveryITCase.spreadCluster("-1");
        Path output = Files.createDirectories(work.resolve("windows"));

        String savepoint = runAndStopWithSavepoint(2, 2, output);

        JobID rescaled = cluster.submitJob(jobGraph(3, 3, output, savepoint)).get().getJobID();
        JobProgress.awaitCheckpoints(cluster, rescaled, 1);
        failWindowsAndAwaitTheEnd(rescaled);
        assertThat(
                        EventTimeWindowJob.violations(
                                CommittedLinesSink.committedLines(output), COUNT, KEYS))
                .as("windows lost, repeated or wrong, across the savepoint and the failure")
                .isEmpty();
    }

    /** Fails subtask 0 of the windows; returns once the job ended, successfully. */
    private void failWindowsAndAwaitTheEnd(JobID job) throws Exception {
        cluster.deliverCoordinationRequestToCoordinator(
                        job,
                        SchedulerEndpoint.OPERATOR_ID,
                        new SerializedValue<>(new FailTaskRequest("windows", 0)))
                .get(1, TimeUnit.MINUTES);
        assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess()).isTrue();
    }

    /**
     * Runs the job at {@code parallelism}, its source at {@code sourceParallelism}, until windows
     * fired, then stops it with a savepoint.
     */
    private String runAndStopWithSavepoint(int parallelism, int sourceParallelism, Path output)
            throws Exception {
        JobID first =
                cluster.submitJob(jobGraph(parallelism, sourceParallelism, output, null))
                        .get()
                        .getJobID();
        SliceRecoveryITCase.awaitCommittedLinks(output, KEYS * 2L);
        String savepoint =
                cluster.stopWithSavepoint(
                                first,
                                work.resolve("savepoints").toUri().toString(),
                                false,
                                SavepointFormatType.CANONICAL)
                        .get(1, TimeUnit.MINUTES);
        assertThat(cluster.requestJobResult(first).get(1, TimeUnit.MINUTES).isSuccess()).isTrue();
        return savepoint;
    }

    private static JobGraph jobGraph(
            int parallelism, int sourceParallelism, Path output, @Nullable String savepoint) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(parallelism);
        EventTimeWindowJob.build(env, sourceParallelism, COUNT, RATE, KEYS, 500, output.toString());
        JobGraph jobGraph = env.getStreamGraph().getJobGraph();
        if (savepoint != null) {
            jobGraph.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(savepoint, false));
        }
        return jobGraph;
    }
}
