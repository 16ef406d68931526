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

package io.clonos.examples;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The event-time job that Flink's documentation teaches first, unchanged: a FLIP-27 source, a
 * timestamp assigner and bounded-out-of-orderness watermark generator as a call of its own (chained
 * to the source), keyBy, one-second tumbling event-time windows with an aggregate, a rebalanced
 * map, and a keyed stateful operator that numbers each key's windows in the order they reach it,
 * into a sink that commits its lines on checkpoints ({@link CommittedLinesSink}).
 *
 * <p>Event {@code n} (1 to {@code count}) has key {@code n % keys} and event time {@link
 * #eventTime}: ten milliseconds apart and out of order by up to {@link #MAX_DISORDER_MILLIS},
 * within the generator's bound, so no event is late and every window's result is known beforehand
 * ({@link #violations}). Each line is {@code key,windowStart,count,sum,number}. Arguments: {@code
 * --count} (default 12000), {@code --rate} per second per source subtask (default 500), {@code
 * --keys} (default 8), {@code --checkpoint-interval} ms (default 500), {@code --parallelism}
 * (default 2), {@code --output}.
 */
public final class EventTimeWindowJob {

    static final long MAX_DISORDER_MILLIS = 28;
    private static final long WINDOW_MILLIS = 1_000;

    private EventTimeWindowJob() {}

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(params.getInt("parallelism", 2));
        build(
                env,
                params.getLong("count", 12_000),
                params.getInt("rate", 500),
                params.getInt("keys", 8),
                params.getLong("checkpoint-interval", 500),
                params.getRequired("output"));
        env.execute("event-time windows");
    }

    /** The event time of event {@code n}: 10 ms apart, some up to 28 ms early. */
    public static long eventTime(long n) {
        return n * 10 - (n % 5) * 7;
    }

    /** Adds the job to {@code env}, at its parallelism. */
    public static void build(
            StreamExecutionEnvironment env,
            long count,
            int ratePerSubtask,
            int keys,
            long checkpointInterval,
            String output) {
        build(env, env.getParallelism(), count, ratePerSubtask, keys, checkpointInterval, output);
    }

    /**
     * Adds the job to {@code env}, the source and its assigner at {@code sourceParallelism}, the
     * rest at the environment's parallelism.
     *
     * <p>Keeping the source's parallelism when a job is restored at another one keeps each reader
     * at one split: a reader that restores two splits reads one after the other, and the second
     * one's events, behind the first one's watermark, are late and dropped (on Flink as on Clonos;
     * see docs/architecture.md).
     */
    public static void build(
            StreamExecutionEnvironment env,
            int sourceParallelism,
            long count,
            int ratePerSubtask,
            int keys,
            long checkpointInterval,
            String output) {
        env.enableCheckpointing(checkpointInterval);
        DataStream<Tuple3<Long, Long, Long>> events =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        index -> {
                                            long n = index + 1;
                                            return Tuple3.of(n % keys, n, eventTime(n));
                                        },
                                        count,
                                        RateLimiterStrategy.perSecond(
                                                ratePerSubtask * sourceParallelism),
                                        Types.TUPLE(Types.LONG, Types.LONG, Types.LONG)),
                                WatermarkStrategy.noWatermarks(),
                                "source")
                        .setParallelism(sourceParallelism)
                        .assignTimestampsAndWatermarks(
                                WatermarkStrategy
                                        .<Tuple3<Long, Long, Long>>forBoundedOutOfOrderness(
                                                Duration.ofMillis(100))
                                        .withTimestampAssigner((event, previous) -> event.f2))
                        .setParallelism(sourceParallelism)
                        .name("assigner");
        events.keyBy(event -> event.f0)
                .window(TumblingEventTimeWindows.of(Duration.ofMillis(WINDOW_MILLIS)))
                .aggregate(new CountAndSum(), new WindowStart())
                .name("windows")
                .rebalance()
                .map(result -> result)
                .returns(Types.TUPLE(Types.LONG, Types.LONG, Types.LONG, Types.LONG))
                .name("map")
                .keyBy(result -> result.f0)
                .process(new NumberPerKey())
                .name("numbered")
                .addSink(new CommittedLinesSink(output))
                .name("sink");
    }

    /**
     * What is wrong with the committed {@code lines} of a run over {@code count} events in {@code
     * keys} keys: windows lost, repeated or with the wrong result, and keys whose numbers are not 1
     * to their number of windows; empty if nothing.
     */
    public static List<String> violations(List<String> lines, long count, int keys) {
        WindowResults expected = new WindowResults();
        for (long n = 1; n <= count; n++) {
            expected.add(n % keys, Math.floorDiv(eventTime(n), WINDOW_MILLIS) * WINDOW_MILLIS, n);
        }
        List<String> violations = expected.violations(lines);
        Map<Long, List<Long>> numbers = new TreeMap<>();
        for (String line : lines) {
            String[] f = line.split(",");
            numbers.computeIfAbsent(Long.parseLong(f[0]), k -> new ArrayList<>())
                    .add(Long.parseLong(f[4]));
        }
        numbers.forEach(
                (key, got) -> {
                    List<Long> sorted = new ArrayList<>(got);
                    sorted.sort(null);
                    for (int i = 0; i < sorted.size(); i++) {
                        if (sorted.get(i) != i + 1) {
                            violations.add("key " + key + " numbered its windows " + sorted);
                            break;
                        }
                    }
                });
        return violations;
    }

    /** Counts and sums a window's events. */
    private static final class CountAndSum
            implements AggregateFunction<
                    Tuple3<Long, Long, Long>, Tuple2<Long, Long>, Tuple2<Long, Long>> {
        @Override
        public Tuple2<Long, Long> createAccumulator() {
            return Tuple2.of(0L, 0L);
        }

        @Override
        public Tuple2<Long, Long> add(Tuple3<Long, Long, Long> event, Tuple2<Long, Long> acc) {
            return Tuple2.of(acc.f0 + 1, acc.f1 + event.f1);
        }

        @Override
        public Tuple2<Long, Long> getResult(Tuple2<Long, Long> acc) {
            return acc;
        }

        @Override
        public Tuple2<Long, Long> merge(Tuple2<Long, Long> a, Tuple2<Long, Long> b) {
            return Tuple2.of(a.f0 + b.f0, a.f1 + b.f1);
        }
    }

    /** (key, window start, count, sum). */
    private static final class WindowStart
            extends ProcessWindowFunction<
                    Tuple2<Long, Long>, Tuple4<Long, Long, Long, Long>, Long, TimeWindow> {
        @Override
        public void process(
                Long key,
                Context context,
                Iterable<Tuple2<Long, Long>> results,
                Collector<Tuple4<Long, Long, Long, Long>> out) {
            for (Tuple2<Long, Long> result : results) {
                out.collect(Tuple4.of(key, context.window().getStart(), result.f0, result.f1));
            }
        }
    }

    /** Numbers each key's windows in the order they reach it: keyed state. */
    private static final class NumberPerKey
            extends KeyedProcessFunction<Long, Tuple4<Long, Long, Long, Long>, String> {
        private transient ValueState<Long> windows;

        @Override
        public void open(OpenContext openContext) {
            windows =
                    getRuntimeContext().getState(new ValueStateDescriptor<>("windows", Types.LONG));
        }

        @Override
        public void processElement(
                Tuple4<Long, Long, Long, Long> result, Context context, Collector<String> out)
                throws Exception {
            long number = (windows.value() == null ? 0 : windows.value()) + 1;
            windows.update(number);
            out.collect(
                    result.f0 + "," + result.f1 + "," + result.f2 + "," + result.f3 + "," + number);
        }
    }
}
