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

import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.protocol.FailTaskRequest;
import io.clonos.runtime.protocol.SchedulerEndpoint;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.SinkFunction;
import org.apache.flink.util.SerializedValue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.annotation.Nullable;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A job Clonos does not cover, here one that does not checkpoint, on a real embedded cluster whose
 * in-flight logs are a few bytes of memory that hold their producers back when full: nothing would
 * ever truncate a log of such a job, so it has none, runs at full speed however much it sends, and
 * a failure is Flink's: the restart strategy restarts the job from its start.
 */
class UncoveredJobsITCase {

    private static final long NUMBERS = 400_000;
    private static final int KEYS = 8;
    private static final int PARALLELISM = 2;

    /** The last running sum per key; static because the embedded cluster shares this JVM. */
    static final Map<Long, Long> SUMS = new ConcurrentHashMap<>();

    private ClonosMiniCluster cluster;

    @BeforeEach
    void startCluster() throws Exception {
        SUMS.clear();
        InFlightLogFigures.clear();
        cluster =
                RecoveryClusters.start(
                        Configuration.fromMap(
                                Map.of(
                                        "clonos.in-flight-log.type", "spillable",
                                        "clonos.in-flight-log.memory", "16b",
                                        "metrics.reporter.heldback.factory.class",
                                                InFlightLogFigures.FACTORY)),
                        6,
                        1,
                        1);
    }

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aJobWithoutCheckpointsHasNoInFlightLogThatCouldFillTheDisk() throws Exception {
        JobID job = cluster.submitJob(jobGraph(Long.MAX_VALUE, null)).get().getJobID();

        assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess()).isTrue();
        assertThat(SUMS).isEqualTo(expectedSums());
        assertThat(InFlightLogFigures.spilledBytes())
                .as("bytes the in-flight logs wrote to disk")
                .isZero();
    }

    @Test
    void theSameJobWithCheckpointsLogsWhatItSendsAndSpillsWhatTheMemoryCannotHold()
            throws Exception {
        // checkpoints on, but none due before the job ends: nothing truncates the logs
        JobID job = cluster.submitJob(jobGraph(Long.MAX_VALUE, 3_600_000L)).get().getJobID();

        assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess()).isTrue();
        assertThat(SUMS).isEqualTo(expectedSums());
        assertThat(InFlightLogFigures.spilledBytes())
                .as("bytes the in-flight logs wrote to disk")
                .isGreaterThan(NUMBERS * Long.BYTES);
    }

    @Test
    void aFailureOfAJobWithoutCheckpointsRestartsItFromItsStartAsFlinkWould() throws Exception {
        JobID job = cluster.submitJob(jobGraph(100_000, null)).get().getJobID();
        JobProgress.awaitRunning(cluster, job);

        cluster.deliverCoordinationRequestToCoordinator(
                        job,
                        SchedulerEndpoint.OPERATOR_ID,
                        new SerializedValue<>(new FailTaskRequest("sum", 0)))
                .get(1, TimeUnit.MINUTES);

        assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess()).isTrue();
        AccessExecutionGraph finished = cluster.getArchivedExecutionGraph(job).get();
        int subtasks = 0;
        for (AccessExecutionVertex ignored : finished.getAllExecutionVertices()) {
            subtasks++;
        }
        assertThat(Attempts.restarted(finished))
                .as("every subtask restarted (one pipelined region)")
                .hasSize(subtasks);
        assertThat(SUMS).as("the restarted job counted from the start").isEqualTo(expectedSums());
    }

    private static Map<Long, Long> expectedSums() {
        Map<Long, Long> expected = new HashMap<>();
        for (long n = 1; n <= NUMBERS; n++) {
            expected.merge(n % KEYS, n, Long::sum);
        }
        return expected;
    }

    /**
     * Each stage on TaskManagers of its own, so that every channel is remote; checkpoints at {@code
     * checkpointInterval} milliseconds, none if null.
     */
    private static JobGraph jobGraph(long numbersPerSecond, @Nullable Long checkpointInterval) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARALLELISM);
        if (checkpointInterval != null) {
            env.enableCheckpointing(checkpointInterval);
        }
        env.fromSource(
                        new DataGeneratorSource<>(
                                index -> index + 1,
                                NUMBERS,
                                numbersPerSecond == Long.MAX_VALUE
                                        ? RateLimiterStrategy.noOp()
                                        : RateLimiterStrategy.perSecond(numbersPerSecond),
                                Types.LONG),
                        WatermarkStrategy.noWatermarks(),
                        "source")
                .map(n -> Tuple2.of(n % KEYS, n))
                .returns(Types.TUPLE(Types.LONG, Types.LONG))
                .name("tag")
                .disableChaining()
                .keyBy(t -> t.f0)
                .sum(1)
                .name("sum")
                .slotSharingGroup("sum")
                .keyBy(t -> t.f0)
                .addSink(new LastSum())
                .name("sink")
                .slotSharingGroup("sink");
        return env.getStreamGraph().getJobGraph();
    }

    /** Keeps the last running sum of each key. */
    static final class LastSum implements SinkFunction<Tuple2<Long, Long>> {
        @Override
        public void invoke(Tuple2<Long, Long> sum, Context context) {
            SUMS.put(sum.f0, sum.f1);
        }
    }
}
