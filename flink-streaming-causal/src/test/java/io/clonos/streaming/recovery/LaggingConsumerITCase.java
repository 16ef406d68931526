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
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.SinkFunction;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.BitSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A recovered consumer that lags behind its replay does not stop its surviving producer for the
 * producer's other consumers. One source feeds two subtasks of a map through a rebalance; subtask 0
 * fails, and its replacement stops at its first record until subtask 1 has processed {@link #LEAD}
 * more records. Flink's queue would hold the producer back after a few dozen buffers (its buffer
 * pool and the consumer's credits), far fewer records than that; the replacement waits at most
 * {@link #GATE_TIMEOUT_MS} and the test fails when it had to.
 */
class LaggingConsumerITCase {

    private static final long NUMBERS = 500_000;
    private static final long FAIL_AT = 30_000;
    private static final long LEAD = 80_000;
    private static final long GATE_TIMEOUT_MS = 60_000;

    /** Static: the embedded cluster runs the job in this JVM. */
    static final AtomicLong OTHER_PROCESSED = new AtomicLong();

    static final AtomicBoolean GATE_TIMED_OUT = new AtomicBoolean();
    static final AtomicBoolean GATE_WAITED = new AtomicBoolean();
    static final BitSet RECEIVED = new BitSet();

    private ClonosMiniCluster cluster;

    @BeforeEach
    void reset() {
        OTHER_PROCESSED.set(0);
        GATE_TIMED_OUT.set(false);
        GATE_WAITED.set(false);
        synchronized (RECEIVED) {
            RECEIVED.clear();
        }
    }

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void theSurvivingProducerKeepsFeedingItsOtherConsumersWhileTheReplacementLags()
            throws Exception {
        cluster = RecoveryClusters.start(new Configuration(), 2, 2, 3);
        JobID job = cluster.submitJob(jobGraph()).get().getJobID();
        assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess()).isTrue();
        AccessExecutionGraph graph = cluster.getArchivedExecutionGraph(job).get();

        Set<String> restarted = Attempts.restarted(graph);
        assertThat(restarted).as(() -> Attempts.why(graph)).hasSize(1);
        assertThat(restarted.iterator().next()).as(() -> Attempts.why(graph)).contains("lagging");
        assertThat(restarted.iterator().next()).endsWith("[0]");
        assertThat(GATE_WAITED).as("the replacement waited at its first record").isTrue();
        assertThat(GATE_TIMED_OUT)
                .as("subtask 1 got %d records past the replacement's first one", LEAD)
                .isFalse();
        synchronized (RECEIVED) {
            assertThat(RECEIVED.cardinality()).as("every number arrived").isEqualTo((int) NUMBERS);
        }
    }

    private static JobGraph jobGraph() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(200);
        env.fromSource(
                        new DataGeneratorSource<>(
                                index -> index,
                                NUMBERS,
                                RateLimiterStrategy.perSecond(20_000),
                                Types.LONG),
                        WatermarkStrategy.noWatermarks(),
                        "source")
                .setParallelism(1)
                .rebalance()
                .map(new Lagging())
                .name("lagging")
                .setParallelism(2)
                .addSink(new Received())
                .name("sink")
                .setParallelism(2);
        return env.getStreamGraph().getJobGraph();
    }

    /**
     * Subtask 0 fails at its {@link #FAIL_AT}th record; its replacement waits at its first record
     * for subtask 1 to get {@link #LEAD} records ahead. Subtask 1 counts.
     */
    static final class Lagging extends RichMapFunction<Long, Long> {
        private long seen;

        @Override
        public Long map(Long n) throws Exception {
            int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            int attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
            seen++;
            if (subtask == 1) {
                OTHER_PROCESSED.incrementAndGet();
            } else if (attempt == 0 && seen == FAIL_AT) {
                throw new RuntimeException("Failing subtask 0 on purpose");
            } else if (attempt == 1 && seen == 1) {
                awaitLead();
            }
            return n;
        }

        private static void awaitLead() throws InterruptedException {
            GATE_WAITED.set(true);
            long target = OTHER_PROCESSED.get() + LEAD;
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(GATE_TIMEOUT_MS);
            while (OTHER_PROCESSED.get() < target) {
                if (System.nanoTime() > deadline) {
                    GATE_TIMED_OUT.set(true);
                    return;
                }
                Thread.sleep(10);
            }
        }
    }

    static final class Received implements SinkFunction<Long> {
        @Override
        public void invoke(Long n, Context context) {
            synchronized (RECEIVED) {
                RECEIVED.set(n.intValue());
            }
        }
    }
}
