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

package io.clonos.bench.experiment;

import io.clonos.bench.probe.ProbeRecords;
import io.clonos.streaming.causal.CausalServices;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The benchmarks' job: a source (rate-limited unless the rate is 0) of (key, sequence number,
 * creation time), a keyed stateful map holding {@code stateBytesPerKey} of state per key, a keyed
 * tumbling processing-time window that re-emits its elements, and a sink that records when each
 * element arrived, exactly once ({@link CommittingSink}; the overhead benchmark's sink counts
 * instead). Every stage is its own task.
 */
@Internal
public final class SyntheticJob {

    /**
     * The end of a held-back warm-up, at full speed: the job reaches its pace before the sinks
     * count.
     */
    public static final long WARM_UP_AT_FULL_SPEED_MILLIS = 2_000;

    private static final String RECEIVED = "received";
    private static final String FIRST_PROCESSED = "first-processed";

    private SyntheticJob() {}

    /** What the job's sinks received, {key, seq, created, received}, from its probe records. */
    public static List<long[]> received(Path probes) throws IOException {
        return ProbeRecords.read(probes, RECEIVED, 4);
    }

    /**
     * When each attempt of each subtask of the stateful map processed its first record, from the
     * job's probe records: {@link StatefulMap#firstProcessedKey} to millis.
     */
    static Map<String, Long> firstProcessed(Path probes) throws IOException {
        Map<String, Long> first = new HashMap<>();
        for (long[] row : ProbeRecords.read(probes, FIRST_PROCESSED, 3)) {
            first.merge(
                    StatefulMap.firstProcessedKey((int) row[0], (int) row[1]), row[2], Math::min);
        }
        return first;
    }

    /**
     * The job; with {@code reproducibleClock} the source reads the creation time through Clonos'
     * causal services, so that a recovered source regenerates the records its predecessor sent (a
     * job that reads the wall clock directly cannot recover a source locally: Clonos detects the
     * divergence and rolls back globally). The overhead benchmark reads it directly, as the same
     * job on vanilla Flink does. The job's probes write what they observe to {@code probes} ({@link
     * #received}, {@link #firstProcessed}).
     */
    /** The job with a benchmark's settings and a clock its recovery reproduces. */
    public static JobGraph build(KillSettings settings, Path probes) {
        return build(
                settings.records,
                settings.rate,
                settings.keys,
                settings.parallelism,
                settings.stateBytesPerKey,
                settings.checkpointIntervalMs,
                true,
                probes);
    }

    public static JobGraph build(
            long records,
            int rate,
            int keys,
            int parallelism,
            int stateBytesPerKey,
            long checkpointIntervalMs,
            boolean reproducibleClock,
            Path probes) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        stages(
                        env,
                        records,
                        rate > 0 ? RateLimiterStrategy.perSecond(rate) : RateLimiterStrategy.noOp(),
                        keys,
                        parallelism,
                        stateBytesPerKey,
                        checkpointIntervalMs,
                        reproducibleClock,
                        probes)
                .addSink(new CommittingSink(probes.toString(), RECEIVED))
                .name("sink");
        return env.getStreamGraph().getJobGraph();
    }

    /**
     * The job as fast as it runs, for the overhead benchmark: its sinks count what arrives after a
     * warm-up of {@code warmupMillis} and its latencies ({@link SteadyStateSink}), in constant
     * memory. With a {@code warmupRate}, its sources are held to that many records per second for
     * all of the warm-up but its last {@link #WARM_UP_AT_FULL_SPEED_MILLIS} ({@link WarmUpRate}).
     */
    static JobGraph buildSteadyState(
            long records,
            int keys,
            int parallelism,
            int stateBytesPerKey,
            long checkpointIntervalMs,
            long warmupMillis,
            int warmupRate,
            Path probes) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        long heldMillis = warmupMillis - WARM_UP_AT_FULL_SPEED_MILLIS;
        stages(
                        env,
                        records,
                        warmupRate > 0 && heldMillis > 0
                                ? new WarmUpRate(warmupRate, heldMillis)
                                : RateLimiterStrategy.noOp(),
                        keys,
                        parallelism,
                        stateBytesPerKey,
                        checkpointIntervalMs,
                        false,
                        probes)
                .addSink(new SteadyStateSink(probes.toString(), warmupMillis))
                .name("sink");
        return env.getStreamGraph().getJobGraph();
    }

    private static DataStream<Tuple3<Long, Long, Long>> stages(
            StreamExecutionEnvironment env,
            long records,
            RateLimiterStrategy rate,
            int keys,
            int parallelism,
            int stateBytesPerKey,
            long checkpointIntervalMs,
            boolean reproducibleClock,
            Path probes) {
        env.setParallelism(parallelism);
        env.enableCheckpointing(checkpointIntervalMs);
        env.disableOperatorChaining();
        return env.fromSource(
                        new DataGeneratorSource<>(
                                new Generate(keys, reproducibleClock),
                                records,
                                rate,
                                Types.TUPLE(Types.LONG, Types.LONG, Types.LONG)),
                        WatermarkStrategy.noWatermarks(),
                        "source")
                .keyBy(event -> event.f0)
                .map(new StatefulMap(stateBytesPerKey, probes.toString()))
                .name("stateful-map")
                .keyBy(event -> event.f0)
                .window(TumblingProcessingTimeWindows.of(Duration.ofMillis(100)))
                .process(new ReEmit())
                .name("window");
    }

    /**
     * Whether record {@code seq} of a run of {@code records} at {@code rate} per second must reach
     * the sink. The source splits the sequence numbers into one contiguous range per subtask; the
     * last second of each range may end in a window that never fires (Flink does not fire
     * processing-time windows when a bounded input ends).
     */
    public static boolean mustArrive(long seq, long records, int parallelism, int rate) {
        long perSubtask = records / parallelism;
        long tail = rate / parallelism;
        return seq % perSubtask < perSubtask - tail;
    }

    /** Record {@code seq}: its key, {@code seq}, and when it was created. */
    static final class Generate implements GeneratorFunction<Long, Tuple3<Long, Long, Long>> {
        private final int keys;
        private final boolean reproducibleClock;
        private transient CausalServices causal;

        Generate(int keys, boolean reproducibleClock) {
            this.keys = keys;
            this.reproducibleClock = reproducibleClock;
        }

        @Override
        public Tuple3<Long, Long, Long> map(Long seq) {
            if (reproducibleClock && causal == null) {
                // here, on the task thread: open() may run before the task processes
                causal = CausalServices.ofTaskThread();
            }
            return Tuple3.of(
                    seq % keys,
                    seq,
                    reproducibleClock ? causal.currentTimeMillis() : System.currentTimeMillis());
        }
    }

    /** Keeps {@code bytes} of state per key and updates it with every event. */
    static final class StatefulMap
            extends RichMapFunction<Tuple3<Long, Long, Long>, Tuple3<Long, Long, Long>> {
        private final int bytes;
        private final String probes;
        private transient ValueState<byte[]> payload;
        private transient boolean processed;

        StatefulMap(int bytes, String probes) {
            this.bytes = bytes;
            this.probes = probes;
        }

        @Override
        public void open(Configuration parameters) {
            payload =
                    getRuntimeContext()
                            .getState(new ValueStateDescriptor<>("payload", byte[].class));
        }

        @Override
        public Tuple3<Long, Long, Long> map(Tuple3<Long, Long, Long> event) throws Exception {
            if (!processed) {
                processed = true;
                try (ProbeRecords.Writer first = ProbeRecords.create(probes, FIRST_PROCESSED, 3)) {
                    first.write(
                            getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                            getRuntimeContext().getTaskInfo().getAttemptNumber(),
                            System.currentTimeMillis());
                }
            }
            byte[] state = payload.value();
            if (state == null) {
                // incompressible, like real state: a backend that compresses does not shrink it
                state = new byte[bytes];
                new Random(event.f0).nextBytes(state);
            }
            state[(int) (event.f1 % state.length)]++;
            payload.update(state);
            return event;
        }

        static String firstProcessedKey(int subtask, int attempt) {
            return subtask + "#" + attempt;
        }
    }

    static final class ReEmit
            extends ProcessWindowFunction<
                    Tuple3<Long, Long, Long>, Tuple3<Long, Long, Long>, Long, TimeWindow> {
        @Override
        public void process(
                Long key,
                Context context,
                Iterable<Tuple3<Long, Long, Long>> events,
                Collector<Tuple3<Long, Long, Long>> out) {
            events.forEach(out::collect);
        }
    }
}
