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
import io.clonos.examples.HashChains;
import io.clonos.examples.WallClockJob;
import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.protocol.FailTaskRequest;
import io.clonos.runtime.protocol.SchedulerEndpoint;

import org.apache.flink.api.common.JobID;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.SerializedValue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A job whose own function reads {@code System.currentTimeMillis()}, {@code System.nanoTime()} and
 * {@code Instant.now()} and draws from {@code new Random()}, {@code Math.random()}, {@code
 * ThreadLocalRandom} and {@code UUID.randomUUID()} ({@link WallClockJob}), unchanged, submitted
 * with its function in a job jar as a user submits it (so that Flink's user-code class loader loads
 * it): its task fails, recovers alone, and every record takes effect exactly once with the digests
 * its predecessor computed. Without {@code clonos.user-code.causal-calls} the recovered function
 * reads another time and draws other numbers, and the job rolls back globally.
 */
class UnchangedUserCodeITCase {

    private static final long COUNT = 6_000;

    @TempDir java.nio.file.Path work;

    private ClonosMiniCluster cluster;

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @ParameterizedTest(name = "DSD {0}")
    @ValueSource(strings = {"-1", "1"})
    void aFunctionThatReadsTheClockAndDrawsRandomNumbersRecoversLocally(String dsd)
            throws Exception {
        cluster = SliceRecoveryITCase.spreadCluster(dsd);
        java.nio.file.Path output = Files.createDirectories(work.resolve("links"));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        WallClockJob.build(env, COUNT, 500, 500, output.toString());
        JobGraph jobGraph = env.getStreamGraph().getJobGraph();
        java.nio.file.Path jar = work.resolve("job.jar");
        JobJars.write(jar, List.of(WallClockJob.Stamp.class));
        jobGraph.addJar(new Path(jar.toUri()));
        JobID job = cluster.submitJob(jobGraph).get().getJobID();

        SliceRecoveryITCase.awaitCommittedLinks(output, COUNT / 4);
        cluster.deliverCoordinationRequestToCoordinator(
                        job,
                        SchedulerEndpoint.OPERATOR_ID,
                        new SerializedValue<>(new FailTaskRequest(WallClockJob.STAMP, 0)))
                .get(1, TimeUnit.MINUTES);
        assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess()).isTrue();

        AccessExecutionGraph finished = cluster.getArchivedExecutionGraph(job).get();
        assertThat(SliceRecoveryITCase.restartedSubtasks(finished))
                .as(() -> "only the failed subtask restarts, once; " + Attempts.why(finished))
                .isEqualTo(Set.of(WallClockJob.STAMP + "[0]"));
        assertThat(
                        HashChains.violations(
                                CommittedLinesSink.committedLines(output),
                                WallClockJob.sources(),
                                COUNT))
                .as("broken, lossy or repeated hash chains")
                .isEmpty();
    }
}
