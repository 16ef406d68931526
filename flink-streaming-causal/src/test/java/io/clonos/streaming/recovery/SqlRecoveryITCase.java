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
import io.clonos.examples.SqlWindowJob;
import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.protocol.FailTaskRequest;
import io.clonos.runtime.protocol.SchedulerEndpoint;

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.SerializedValue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink SQL on Clonos: a window TVF aggregate, an interval join and a {@code MATCH_RECOGNIZE}
 * ({@link SqlWindowJob}: over datagen tables whose event time and watermark the DDL declares, so
 * that the planner's watermark assigner runs chained to the source) lose one task, the assigner's,
 * the windows', the join's or the match's, and recover it alone: every (key, window) row, joined id
 * and match is committed exactly once with the result its rows give. Tagged slow: the default run
 * has the same job under SIGKILL on separate processes ({@code SqlOnClonosIT}) and its statement
 * among the coverage rows.
 */
@Tag("slow")
class SqlRecoveryITCase {

    private static final long COUNT = 6_000;
    private static final int KEYS = 8;

    @TempDir Path work;

    private ClonosMiniCluster cluster;

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"WatermarkAssigner", "GlobalWindowAggregate", "IntervalJoin", "Match"})
    void aFailedTaskOfTheSqlJobRecoversLocally(String operator) throws Exception {
        cluster = SliceRecoveryITCase.spreadCluster("-1");
        Path output = Files.createDirectories(work.resolve("rows"));
        JobGraph jobGraph = windowAggregate(output);
        String vertex = vertexWith(jobGraph, operator);
        JobID job = cluster.submitJob(jobGraph).get().getJobID();

        SliceRecoveryITCase.awaitCommittedLinks(output, KEYS);
        cluster.deliverCoordinationRequestToCoordinator(
                        job,
                        SchedulerEndpoint.OPERATOR_ID,
                        new SerializedValue<>(new FailTaskRequest(vertex, 0)))
                .get(1, TimeUnit.MINUTES);
        assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess()).isTrue();

        AccessExecutionGraph finished = cluster.getArchivedExecutionGraph(job).get();
        assertThat(SliceRecoveryITCase.restartedSubtasks(finished))
                .as(() -> "only the failed subtask restarts, once; " + Attempts.why(finished))
                .isEqualTo(Set.of(vertex + "[0]"));
        assertThat(
                        SqlWindowJob.violations(
                                CommittedLinesSink.committedLines(output), COUNT, KEYS, true))
                .as("windows, joined ids or matches lost, repeated or wrong")
                .isEmpty();
    }

    /** The SQL job, built by the planner into the job graph a client submits. */
    private static JobGraph windowAggregate(Path output) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        SqlWindowJob.build(env, COUNT, 1_000, KEYS, 500, true, output.toString());
        return env.getStreamGraph().getJobGraph();
    }

    private static String vertexWith(JobGraph jobGraph, String operator) {
        for (JobVertex vertex : jobGraph.getVertices()) {
            if (vertex.getName().contains(operator)) {
                return vertex.getName();
            }
        }
        throw new AssertionError("No vertex runs " + operator);
    }
}
