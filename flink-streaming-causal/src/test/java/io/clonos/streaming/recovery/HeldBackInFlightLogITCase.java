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

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.SinkFunction;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Full in-memory in-flight logs under a producer as fast as the machine allows, on a real embedded
 * cluster where each stage runs on TaskManagers of its own (every channel between stages is
 * remote): every log holds its producer back, the inputs of the tasks held back fill up, and each
 * checkpoint's barrier must still get through to them, or the job would stop. The job completes
 * with every number counted once.
 */
class HeldBackInFlightLogITCase {

    private static final long NUMBERS = 1_000_000;
    private static final int KEYS = 8;
    private static final int PARALLELISM = 2;

    /** The last running sum per key; static because the embedded cluster shares this JVM. */
    static final Map<Long, Long> SUMS = new ConcurrentHashMap<>();

    private ClonosMiniCluster cluster;

    @BeforeEach
    void reset() {
        SUMS.clear();
        InFlightLogFigures.clear();
    }

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void fullLogsHoldTheirProducersBackAndEveryBarrierStillGetsThrough() throws Exception {
        cluster =
                RecoveryClusters.start(
                        Configuration.fromMap(
                                Map.of(
                                        "clonos.in-flight-log.type", "in-memory",
                                        "clonos.in-flight-log.memory", "16b",
                                        "metrics.reporter.heldback.factory.class",
                                                InFlightLogFigures.FACTORY)),
                        6,
                        1,
                        0);
        JobID job = cluster.submitJob(jobGraph()).get().getJobID();

        assertThat(cluster.requestJobResult(job).get(120, TimeUnit.SECONDS).isSuccess()).isTrue();
        Map<Long, Long> expected = new java.util.HashMap<>();
        for (long n = 1; n <= NUMBERS; n++) {
            expected.merge(n % KEYS, n, Long::sum);
        }
        assertThat(SUMS).isEqualTo(expected);
        assertThat(InFlightLogFigures.heldBackMillis())
                .as("milliseconds the logs held their producers back")
                .isPositive();
    }

    private static JobGraph jobGraph() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARALLELISM);
        env.enableCheckpointing(500);
        env.fromSource(
                        new DataGeneratorSource<>(index -> index + 1, NUMBERS, Types.LONG),
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
