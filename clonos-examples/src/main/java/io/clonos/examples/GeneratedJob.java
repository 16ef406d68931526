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

import io.clonos.examples.Shape.Edge;
import io.clonos.examples.Shape.Kind;
import io.clonos.examples.Shape.Stage;

import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFilterFunction;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.TimerService;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * An ordinary Flink job of any depth and shape, generated from a seed or spelled out, whose output
 * shows whether every record took effect exactly once and every task reproduced its predecessor's
 * choices: a rate-limited FLIP-27 source with event time, then stages joined by forward, keyBy,
 * rebalance, rescale, broadcast, union (two input gates), merge (two forward edges from one
 * producer into one task) or connect (a two-input operator) edges, each stage either stateful (a
 * keyed digest per key, optionally with processing-time or event-time timers that emit records of
 * their own, or event-time tumbling windows with a side output for late records) or stateless
 * (optionally behind a timestamp assigner and watermark generator of its own), and a last keyed
 * stage that extends each key's hash chain ({@link HashChains}) and commits it with {@link
 * CommittedLinesSink}. Every stateful stage mixes the processing time into its digest, so a
 * recovered task that does not replay its predecessor's time, input order or timer firings breaks
 * the chain.
 *
 * <p>A shape is written as stages separated by {@code /}, each {@code edge:kind:parallelism}, e.g.
 * {@code keyby:timers:2/rebalance:map:2/keyby:state:2/keyby:state:2}; the source comes first
 * ({@code --source-parallelism}, default 2) and the hash chain last ({@code --chain-parallelism},
 * default the last stage's). Arguments: {@code --shape} or {@code --seed}, {@code --count} numbers
 * (default 20000), {@code --rate} per second per source subtask (default 1000), {@code
 * --checkpoint-interval} ms (default 500), {@code --splits-per-subtask} (default 1: Flink's data
 * generator, which reads its splits one after the other; more: {@link InterleavingSplitsSource},
 * whose readers interleave their splits as Kafka's interleave partitions), {@code
 * --chained-sources} (the odd and the even numbers from two sources chained to an operator that
 * merges them: a {@code MultipleInputStreamTask} that interleaves them as they happen to be
 * available), {@code --output}.
 */
public final class GeneratedJob {

    /** The source's records are inputs {@code s:1} to {@code s:count}. */
    public static String[] sources() {
        return new String[] {SOURCE};
    }

    private static final String SOURCE = "s";

    public static final int KEYS = 16;

    private GeneratedJob() {}

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        Shape shape;
        if (params.has("shape")) {
            Shape parsed =
                    Shape.parse(params.getInt("source-parallelism", 2), params.get("shape", ""));
            shape =
                    new Shape(
                            parsed.sourceParallelism,
                            parsed.stages,
                            params.getInt("chain-parallelism", parsed.chainParallelism));
        } else {
            shape =
                    Shape.random(
                            params.getLong("seed"),
                            params.getInt("max-depth", 7),
                            params.getInt("max-parallelism", 4));
        }
        if (params.has("chained-sources")) {
            shape = shape.withChainedSources();
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        build(
                env,
                shape,
                params.getLong("count", 20_000),
                params.getInt("rate", 1_000),
                params.getLong("checkpoint-interval", 500),
                params.getInt("splits-per-subtask", 1),
                params.getRequired("output"));
        env.execute("generated " + shape);
    }

    /**
     * The odd and the even numbers up to {@code count}, tagged by two sources chained to an
     * operator that merges them ({@link SourcesMerge}, named {@link Shape#MERGED_SOURCES}) in the
     * order its task takes their records.
     */
    private static DataStream<Tuple3<Long, String, Long>> mergedSources(
            StreamExecutionEnvironment env,
            Shape shape,
            long count,
            int ratePerSubtask,
            TypeInformation<Tuple3<Long, String, Long>> type) {
        List<DataStream<Tuple3<Long, String, Long>>> halves = new ArrayList<>();
        for (int parity = 1; parity >= 0; parity--) {
            long first = 2 - parity;
            halves.add(
                    env.fromSource(
                                    new DataGeneratorSource<>(
                                            index -> {
                                                long n = first + 2 * index;
                                                return Tuple3.of(n % KEYS, SOURCE + ":" + n, n);
                                            },
                                            (count + parity) / 2,
                                            RateLimiterStrategy.perSecond(
                                                    Math.max(
                                                            1,
                                                            ratePerSubtask
                                                                    * shape.sourceParallelism
                                                                    / 2)),
                                            type),
                                    // each source's numbers ascend: event time is the number
                                    WatermarkStrategy
                                            .<Tuple3<Long, String, Long>>forMonotonousTimestamps()
                                            .withTimestampAssigner((t, previous) -> t.f2),
                                    parity == 1 ? "odd" : "even")
                            .setParallelism(shape.sourceParallelism));
        }
        return SourcesMerge.of(env, Shape.MERGED_SOURCES, type, halves.get(0), halves.get(1))
                .setParallelism(shape.sourceParallelism);
    }

    /** Adds the job of {@code shape} to {@code env}, its source Flink's data generator. */
    public static void build(
            StreamExecutionEnvironment env,
            Shape shape,
            long count,
            int ratePerSubtask,
            long checkpointInterval,
            String output) {
        build(env, shape, count, ratePerSubtask, checkpointInterval, 1, output);
    }

    /**
     * Adds the job of {@code shape} to {@code env}; with more than one split per source subtask,
     * its readers interleave their splits.
     */
    public static void build(
            StreamExecutionEnvironment env,
            Shape shape,
            long count,
            int ratePerSubtask,
            long checkpointInterval,
            int splitsPerSubtask,
            String output) {
        if (shape.chainedSources && splitsPerSubtask > 1) {
            throw new IllegalArgumentException(
                    "Chained sources are Flink's data generators, which read one split at a time: "
                            + splitsPerSubtask
                            + " splits per subtask cannot be interleaved");
        }
        env.enableCheckpointing(checkpointInterval);
        TypeInformation<Tuple3<Long, String, Long>> type =
                Types.TUPLE(Types.LONG, Types.STRING, Types.LONG);
        Source<Long, ?, ?> numbers =
                splitsPerSubtask <= 1
                        ? new DataGeneratorSource<>(
                                index -> index + 1,
                                count,
                                RateLimiterStrategy.perSecond(
                                        ratePerSubtask * shape.sourceParallelism),
                                Types.LONG)
                        : new InterleavingSplitsSource(
                                count,
                                splitsPerSubtask * shape.sourceParallelism,
                                0,
                                (long)
                                        (InterleavingSplitsSource.AVERAGE_BATCH
                                                * 1e9
                                                / ratePerSubtask));
        DataStream<Tuple3<Long, String, Long>> stream =
                shape.chainedSources
                        ? mergedSources(env, shape, count, ratePerSubtask, type)
                        : env.fromSource(
                                        numbers,
                                        // each split holds its numbers in order: event time is the
                                        // number
                                        WatermarkStrategy.<Long>forMonotonousTimestamps()
                                                .withTimestampAssigner((n, previous) -> n),
                                        "source")
                                .setParallelism(shape.sourceParallelism)
                                .map(n -> Tuple3.of(n % KEYS, SOURCE + ":" + n, n))
                                .returns(type)
                                .setParallelism(shape.sourceParallelism)
                                .name("tag");
        boolean eventTime = true;
        for (int i = 0; i < shape.stages.size(); i++) {
            Stage stage = shape.stages.get(i);
            String name = "stage" + (i + 1) + "-" + stage.kind.name().toLowerCase();
            long salt = i + 1;
            switch (stage.edge) {
                case FORWARD:
                case REBALANCE:
                case RESCALE:
                    if (stage.kind == Kind.SQL) {
                        stream =
                                SqlStage.apply(
                                        partitioned(stream, stage.edge),
                                        stage,
                                        name,
                                        salt,
                                        eventTime);
                        break;
                    }
                    stream =
                            assigned(partitioned(stream, stage.edge), stage, name)
                                    .map(t -> Tuple3.of(t.f0, t.f1, HashChains.mix(t.f2, salt)))
                                    .returns(type)
                                    .name(name)
                                    .setParallelism(stage.parallelism);
                    break;
                case BROADCAST:
                    // every subtask reads every record and keeps its share: each still takes effect
                    // once
                    DataStream<Tuple3<Long, String, Long>> shared =
                            stream.broadcast()
                                    .filter(new Share())
                                    .name(name + "-share")
                                    .setParallelism(stage.parallelism);
                    stream =
                            stage.kind == Kind.SQL
                                    ? SqlStage.apply(shared, stage, name, salt, eventTime)
                                    : assigned(shared, stage, name)
                                            .map(
                                                    t ->
                                                            Tuple3.of(
                                                                    t.f0,
                                                                    t.f1,
                                                                    HashChains.mix(t.f2, salt)))
                                            .returns(type)
                                            .name(name)
                                            .setParallelism(stage.parallelism);
                    break;
                case KEYBY:
                    if (stage.kind == Kind.WINDOW) {
                        stream = windowed(stream, stage, name, salt);
                        break;
                    }
                    stream =
                            stream.keyBy(t -> t.f0)
                                    .process(new Digest(name, stage.kind))
                                    .returns(type)
                                    .name(name)
                                    .setParallelism(stage.parallelism);
                    break;
                case UNION:
                    // two edges into one keyed stage: its input gates interleave
                    stream =
                            even(stream, name)
                                    .union(odd(stream, name))
                                    .keyBy(t -> t.f0)
                                    .process(new Digest(name, stage.kind))
                                    .returns(type)
                                    .name(name)
                                    .setParallelism(stage.parallelism);
                    break;
                case MERGE:
                    // two forward edges from one producer into one task: two input gates
                    stream =
                            even(stream, name)
                                    .union(odd(stream, name))
                                    .map(t -> Tuple3.of(t.f0, t.f1, HashChains.mix(t.f2, salt)))
                                    .returns(type)
                                    .name(name)
                                    .setParallelism(stage.parallelism);
                    break;
                case CONNECT:
                    // a two-input operator over the two halves
                    stream =
                            even(stream, name)
                                    .connect(odd(stream, name))
                                    .keyBy(t -> t.f0, t -> t.f0)
                                    .process(new TwoInputDigest(name, stage.kind))
                                    .returns(type)
                                    .name(name)
                                    .setParallelism(stage.parallelism);
                    break;
                default:
                    throw new IllegalArgumentException("No edge " + stage.edge);
            }
            eventTime &= !stage.kind.dropsEventTime();
        }
        stream.keyBy(t -> t.f0)
                .process(new Chain())
                .name("chain")
                .setParallelism(shape.chainParallelism)
                .addSink(new CommittedLinesSink(output))
                .name("sink")
                .setParallelism(shape.chainParallelism);
    }

    /**
     * The stream through a timestamp assigner of its own, chained behind the edge, for an {@link
     * Kind#ASSIGN} stage: each record keeps its event time, the watermarks are the assigner's.
     */
    private static DataStream<Tuple3<Long, String, Long>> assigned(
            DataStream<Tuple3<Long, String, Long>> stream, Stage stage, String name) {
        if (stage.kind != Kind.ASSIGN) {
            return stream;
        }
        return stream.assignTimestampsAndWatermarks(
                        WatermarkStrategy.<Tuple3<Long, String, Long>>forBoundedOutOfOrderness(
                                        Duration.ofMillis(50))
                                .withTimestampAssigner((t, previous) -> previous))
                .name(name + "-assigner")
                .setParallelism(stage.parallelism);
    }

    /**
     * A {@link Kind#WINDOW} stage: tumbling event-time windows of 100 per key, each record emitted
     * with its window's end mixed in when the window fires; a record that comes late for its window
     * leaves through the late side output, mixed with the salt, so that it still takes effect.
     */
    private static DataStream<Tuple3<Long, String, Long>> windowed(
            DataStream<Tuple3<Long, String, Long>> stream, Stage stage, String name, long salt) {
        OutputTag<Tuple3<Long, String, Long>> late =
                new OutputTag<>(name + "-late", stream.getType());
        SingleOutputStreamOperator<Tuple3<Long, String, Long>> windows =
                stream.keyBy(t -> t.f0)
                        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
                        .sideOutputLateData(late)
                        .process(new WindowDigest())
                        .returns(stream.getType())
                        .name(name)
                        .setParallelism(stage.parallelism);
        return windows.union(
                windows.getSideOutput(late)
                        .map(t -> Tuple3.of(t.f0, t.f1, HashChains.mix(t.f2, salt)))
                        .returns(stream.getType())
                        .name(name + "-late")
                        .setParallelism(stage.parallelism));
    }

    /** Emits each record of a window, in the order the window took them, with its end mixed in. */
    static final class WindowDigest
            extends ProcessWindowFunction<
                    Tuple3<Long, String, Long>, Tuple3<Long, String, Long>, Long, TimeWindow> {
        @Override
        public void process(
                Long key,
                Context context,
                Iterable<Tuple3<Long, String, Long>> records,
                Collector<Tuple3<Long, String, Long>> out) {
            for (Tuple3<Long, String, Long> record : records) {
                out.collect(
                        Tuple3.of(
                                record.f0,
                                record.f1,
                                HashChains.mix(record.f2, context.window().getEnd())));
            }
        }
    }

    private static DataStream<Tuple3<Long, String, Long>> partitioned(
            DataStream<Tuple3<Long, String, Long>> stream, Edge edge) {
        switch (edge) {
            case REBALANCE:
                return stream.rebalance();
            case RESCALE:
                return stream.rescale();
            default:
                return stream.forward();
        }
    }

    private static DataStream<Tuple3<Long, String, Long>> even(
            DataStream<Tuple3<Long, String, Long>> stream, String stage) {
        return stream.filter(t -> (t.f2 & 1) == 0)
                .name(stage + "-even")
                .setParallelism(stream.getParallelism());
    }

    private static DataStream<Tuple3<Long, String, Long>> odd(
            DataStream<Tuple3<Long, String, Long>> stream, String stage) {
        return stream.filter(t -> (t.f2 & 1) == 1)
                .name(stage + "-odd")
                .setParallelism(stream.getParallelism());
    }

    /**
     * A stateful stage: per key a digest over the records in arrival order and the processing time
     * at each; with processing-time timers, one per key every 50 ms (all keys due at the same
     * instants) that emits a record of its own; with event-time timers, one per key every 100 of
     * event time.
     */
    static final class Digest
            extends KeyedProcessFunction<
                    Long, Tuple3<Long, String, Long>, Tuple3<Long, String, Long>> {
        private final DigestState state;

        Digest(String name, Kind kind) {
            this.state = new DigestState(name, kind);
        }

        @Override
        public void open(OpenContext openContext) {
            state.open(getRuntimeContext());
        }

        @Override
        public void processElement(
                Tuple3<Long, String, Long> in,
                Context ctx,
                Collector<Tuple3<Long, String, Long>> out)
                throws Exception {
            out.collect(state.record(in, ctx.timestamp(), ctx.timerService()));
        }

        @Override
        public void onTimer(
                long timestamp, OnTimerContext ctx, Collector<Tuple3<Long, String, Long>> out)
                throws Exception {
            out.collect(state.timer(ctx.getCurrentKey(), timestamp, ctx.timerService()));
        }
    }

    /** {@link Digest} over two inputs: both halves extend the same digest per key. */
    static final class TwoInputDigest
            extends KeyedCoProcessFunction<
                    Long,
                    Tuple3<Long, String, Long>,
                    Tuple3<Long, String, Long>,
                    Tuple3<Long, String, Long>> {
        private final DigestState state;

        TwoInputDigest(String name, Kind kind) {
            this.state = new DigestState(name, kind);
        }

        @Override
        public void open(OpenContext openContext) {
            state.open(getRuntimeContext());
        }

        @Override
        public void processElement1(
                Tuple3<Long, String, Long> in,
                Context ctx,
                Collector<Tuple3<Long, String, Long>> out)
                throws Exception {
            out.collect(state.record(in, ctx.timestamp(), ctx.timerService()));
        }

        @Override
        public void processElement2(
                Tuple3<Long, String, Long> in,
                Context ctx,
                Collector<Tuple3<Long, String, Long>> out)
                throws Exception {
            out.collect(state.record(in, ctx.timestamp(), ctx.timerService()));
        }

        @Override
        public void onTimer(
                long timestamp, OnTimerContext ctx, Collector<Tuple3<Long, String, Long>> out)
                throws Exception {
            out.collect(state.timer(ctx.getCurrentKey(), timestamp, ctx.timerService()));
        }
    }

    /** What both stateful stages do: the digest per key and the timers. */
    static final class DigestState implements Serializable {
        private static final long serialVersionUID = 1L;
        private final String name;
        private final Kind kind;
        private transient ValueState<Long> digest;

        DigestState(String name, Kind kind) {
            this.name = name;
            this.kind = kind;
        }

        void open(RuntimeContext context) {
            digest = context.getState(new ValueStateDescriptor<>("digest", Types.LONG));
        }

        Tuple3<Long, String, Long> record(
                Tuple3<Long, String, Long> in, Long timestamp, TimerService timers)
                throws Exception {
            long now = timers.currentProcessingTime();
            if (kind == Kind.TIMERS) {
                timers.registerProcessingTimeTimer(now - now % 50 + 50);
            } else if (kind == Kind.EVENT_TIMERS && timestamp != null) {
                // records a processing-time timer emitted carry no event time
                timers.registerEventTimeTimer(timestamp - timestamp % 100 + 100);
            }
            return Tuple3.of(in.f0, in.f1, update(HashChains.mix(in.f2, now)));
        }

        Tuple3<Long, String, Long> timer(long key, long timestamp, TimerService timers)
                throws Exception {
            long now = timers.currentProcessingTime();
            return Tuple3.of(
                    key,
                    name + ":" + key + ":" + timestamp,
                    update(HashChains.mix(timestamp, now)));
        }

        private long update(long value) throws Exception {
            Long previous = digest.value();
            long next = HashChains.mix(previous == null ? 0 : previous, value);
            digest.update(next);
            return next;
        }
    }

    /** A broadcast stage's share of the records: each subtask keeps the numbers it owns. */
    static final class Share extends RichFilterFunction<Tuple3<Long, String, Long>> {
        @Override
        public boolean filter(Tuple3<Long, String, Long> record) {
            TaskInfo task = getRuntimeContext().getTaskInfo();
            return Math.floorMod(record.f1.hashCode(), task.getNumberOfParallelSubtasks())
                    == task.getIndexOfThisSubtask();
        }
    }

    /** The last stage: extends each key's hash chain by every record's value. */
    static final class Chain
            extends KeyedProcessFunction<Long, Tuple3<Long, String, Long>, String> {
        private transient ValueState<Tuple2<Long, Long>> chain;

        @Override
        public void open(OpenContext openContext) {
            chain =
                    getRuntimeContext()
                            .getState(
                                    new ValueStateDescriptor<>(
                                            "seq-and-digest", Types.TUPLE(Types.LONG, Types.LONG)));
        }

        @Override
        public void processElement(
                Tuple3<Long, String, Long> in, Context ctx, Collector<String> out)
                throws Exception {
            out.collect(HashChains.link(chain, in.f0, in.f2, in.f1));
        }
    }
}
