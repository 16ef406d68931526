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
import io.clonos.examples.HashChains;
import io.clonos.examples.Shape;
import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.minicluster.EmbeddedTaskManagers;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lost TaskManager that held one subtask of every stage (a vertical slice of the pipeline) is
 * recovered locally: the job of issue 15's scenario (rate-limited FLIP-27 source, keyed state with
 * processing-time timers, a rebalanced stateless stage, two keyed stateful stages, the hash chain
 * and its sink), parallelism 2 on four TaskManagers of two slots with slots spread, loses the
 * TaskManager of the source's subtask 0 while it runs. Only that TaskManager's subtasks restart,
 * every record takes effect exactly once, and the job ends within a bound after the loss.
 */
class SliceRecoveryITCase {

    /**
     * The issue's job: source -> keyBy timers -> rebalance map -> keyBy state -> keyBy state ->
     * chain.
     */
    static final String SLICE_SHAPE = "keyby:timers:2/rebalance:map:2/keyby:state:2/keyby:state:2";

    private static final long COUNT = 12_000;
    private static final int RATE = 1_000;

    @TempDir Path work;

    private ClonosMiniCluster cluster;

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @ParameterizedTest(name = "DSD {0}")
    @ValueSource(strings = {"-1", "1"})
    void lostSliceRecoversLocally(String dsd) throws Exception {
        cluster = spreadCluster(dsd);

        Path output = Files.createDirectories(work.resolve("links"));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        Shape shape = Shape.parse(2, SLICE_SHAPE);
        GeneratedJob.build(env, shape, COUNT, RATE / 2, 500, output.toString());
        JobID job = cluster.submitJob(env.getStreamGraph().getJobGraph()).get().getJobID();

        awaitCommittedLinks(output, COUNT / 3);
        Attempts.Slice slice =
                Attempts.sliceOf(cluster.getExecutionGraph(job).get(), "Source: source");
        String lost = slice.taskManager();
        Set<String> onLost = slice.subtasks();
        assertThat(onLost)
                .as("the lost TaskManager holds a slice: subtasks of every stage")
                .hasSize(shape.depth());
        long killed = System.nanoTime();
        cluster.terminateTaskManager(EmbeddedTaskManagers.indexOf(cluster, lost)).get();

        // what was left to generate, and 15 s for the recovery
        long bound = COUNT * 2 / 3 / RATE + 15;
        assertThat(cluster.requestJobResult(job).get(bound + 60, TimeUnit.SECONDS).isSuccess())
                .isTrue();
        long took = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - killed);
        AccessExecutionGraph finished = cluster.getArchivedExecutionGraph(job).get();
        assertThat(restartedSubtasks(finished))
                .as(
                        () ->
                                "only the lost TaskManager's subtasks restart, once; "
                                        + Attempts.why(finished))
                .isEqualTo(onLost);
        assertThat(
                        HashChains.violations(
                                CommittedLinesSink.committedLines(output),
                                GeneratedJob.sources(),
                                COUNT))
                .as("broken, lossy or repeated hash chains")
                .isEmpty();
        assertThat(took).as("seconds from the loss to the job's end").isLessThanOrEqualTo(bound);
    }

    /**
     * A started embedded Clonos cluster of four TaskManagers with two slots each, slots spread,
     * with DSD {@code dsd} and a restart delay of 100 ms.
     */
    static ClonosMiniCluster spreadCluster(String dsd) throws Exception {
        return RecoveryClusters.start(
                Configuration.fromMap(Map.of("clonos.determinant-sharing-depth", dsd)), 4, 2, 10);
    }

    static void awaitCommittedLinks(Path output, long links) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (CommittedLinesSink.committedLines(output).size() < links
                && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(CommittedLinesSink.committedLines(output).size())
                .as("links committed before the loss")
                .isGreaterThanOrEqualTo((int) links);
    }

    /**
     * Subtasks whose attempt is not the first; attempt 1 for each is asserted by the set equality
     * with attempts.
     */
    static Set<String> restartedSubtasks(AccessExecutionGraph graph) {
        Set<String> restarted = new TreeSet<>();
        Attempts.numbers(graph)
                .forEach(
                        (subtask, attempt) -> {
                            if (attempt > 0) {
                                restarted.add(attempt == 1 ? subtask : subtask + "#" + attempt);
                            }
                        });
        return restarted;
    }
}
