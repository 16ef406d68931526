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
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.SinkFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.SerializedValue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What Clonos guarantees when a job checkpoints at least once ({@link
 * CheckpointingMode#AT_LEAST_ONCE}): barriers are not aligned, so a task's checkpoint may hold
 * records of the epoch after it, which its producers' in-flight logs replay again. A failed task of
 * such a job recovers locally, and its output is at least once: no record is lost, some may come
 * twice (Flink's guarantee in that mode).
 */
class AtLeastOnceCheckpointsITCase {

    private static final long COUNT = 6_000;
    private static final int KEYS = 8;

    /** How often each number reached the sink; static because the cluster shares this JVM. */
    static final Map<Long, AtomicInteger> SEEN = new ConcurrentHashMap<>();

    private ClonosMiniCluster cluster;

    @AfterEach
    void stopCluster() throws Exception {
        SEEN.clear();
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aFailedTaskRecoversLocallyAndLosesNothing() throws Exception {
        cluster = RecoveryClusters.start(new Configuration(), 2, 4, 5);
        JobID job = cluster.submitJob(jobGraph()).get().getJobID();
        JobProgress.awaitCheckpoints(cluster, job, 2);

        cluster.deliverCoordinationRequestToCoordinator(
                        job,
                        SchedulerEndpoint.OPERATOR_ID,
                        new SerializedValue<>(new FailTaskRequest("counted", 0)))
                .get(1, TimeUnit.MINUTES);

        assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess()).isTrue();
        AccessExecutionGraph finished = cluster.getArchivedExecutionGraph(job).get();
        assertThat(Attempts.restarted(finished))
                .as(() -> "only the failed subtask restarts; " + Attempts.why(finished))
                .isEqualTo(Set.of("counted -> Sink: sink[0]"));
        for (long n = 1; n <= COUNT; n++) {
            assertThat(SEEN.get(n)).as("number %d reached the sink", n).isNotNull();
        }
        assertThat(SEEN).hasSize((int) COUNT);
    }

    /** Numbers from two source subtasks, by key to a stateful count per key and to the sink. */
    private static JobGraph jobGraph() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(200);
        env.getCheckpointConfig().setCheckpointingConsistencyMode(CheckpointingMode.AT_LEAST_ONCE);
        env.fromSource(
                        new DataGeneratorSource<>(
                                index -> index + 1,
                                COUNT,
                                RateLimiterStrategy.perSecond(1_000),
                                Types.LONG),
                        WatermarkStrategy.noWatermarks(),
                        "source")
                .keyBy(n -> n % KEYS)
                .process(new CountPerKey())
                .name("counted")
                .addSink(new Seen())
                .name("sink");
        return env.getStreamGraph().getJobGraph();
    }

    /** Passes each number on; counts the numbers of its key in keyed state. */
    private static final class CountPerKey extends KeyedProcessFunction<Long, Long, Long> {
        private transient ValueState<Long> count;

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext context) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        }

        @Override
        public void processElement(Long n, Context context, Collector<Long> out) throws Exception {
            Long before = count.value();
            count.update(before == null ? 1 : before + 1);
            out.collect(n);
        }
    }

    /** Counts how often each number arrives. */
    private static final class Seen implements SinkFunction<Long> {
        @Override
        public void invoke(Long n, Context context) {
            SEEN.computeIfAbsent(n, k -> new AtomicInteger()).incrementAndGet();
        }
    }
}
