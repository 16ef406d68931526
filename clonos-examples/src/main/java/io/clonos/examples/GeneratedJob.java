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

import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFilterFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.TimerService;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;

/**
 * An ordinary Flink job of any depth and shape, generated from a seed or spelled out, whose output
 * shows whether every record took effect exactly once and every task reproduced its predecessor's
 * choices: a rate-limited FLIP-27 source with event time, then stages joined by forward, keyBy,
 * rebalance, rescale, broadcast, union (two input gates) or connect (a two-input operator) edges,
 * each stage either stateful (a keyed digest per key, optionally with processing-time or event-time
 * timers that emit records of their own) or stateless, and a last keyed stage that extends each
 * key's hash chain ({@link HashChains}) and commits it with {@link CommittedLinesSink}. Every
 * stateful stage mixes the processing time into its digest, so a recovered task that does not
 * replay its predecessor's time, input order or timer firings breaks the chain.
 *
 * <p>A shape is written as stages separated by {@code /}, each {@code edge:kind:parallelism}, e.g.
 * {@code keyby:timers:2/rebalance:map:2/keyby:state:2/keyby:state:2}; the source comes first
 * ({@code --source-parallelism}, default 2) and the hash chain last ({@code --chain-parallelism},
 * default the last stage's). Arguments: {@code --shape} or {@code --seed}, {@code --count} numbers
 * (default 20000), {@code --rate} per second per source subtask (default 1000), {@code
 * --checkpoint-interval} ms (default 500), {@code --output}.
 */
public final class GeneratedJob {

    /** The source's records are inputs {@code s:1} to {@code s:count}. */
    public static final String[] SOURCES = {"s"};

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
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        build(
                env,
                shape,
                params.getLong("count", 20_000),
                params.getInt("rate", 1_000),
                params.getLong("checkpoint-interval", 500),
                params.getRequired("output"));
        env.execute("generated " + shape);
    }

    /** Adds the job of {@code shape} to {@code env}. */
    public static void build(
            StreamExecutionEnvironment env,
            Shape shape,
            long count,
            int ratePerSubtask,
            long checkpointInterval,
            String output) {
        env.enableCheckpointing(checkpointInterval);
        TypeInformation<Tuple3<Long, String, Long>> type =
                Types.TUPLE(Types.LONG, Types.STRING, Types.LONG);
        DataStream<Tuple3<Long, String, Long>> stream =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        index -> index + 1,
                                        count,
                                        RateLimiterStrategy.perSecond(
                                                ratePerSubtask * shape.sourceParallelism),
                                        Types.LONG),
                                // each subtask reads its numbers in order: event time is the number
                                WatermarkStrategy.<Long>forMonotonousTimestamps()
                                        .withTimestampAssigner((n, previous) -> n),
                                "source")
                        .setParallelism(shape.sourceParallelism)
                        .map(n -> Tuple3.of(n % KEYS, SOURCES[0] + ":" + n, n))
                        .returns(type)
                        .setParallelism(shape.sourceParallelism)
                        .name("tag");
        for (int i = 0; i < shape.stages.size(); i++) {
            Stage stage = shape.stages.get(i);
            String name = "stage" + (i + 1) + "-" + stage.kind.name().toLowerCase();
            long salt = i + 1;
            switch (stage.edge) {
                case FORWARD:
                case REBALANCE:
                case RESCALE:
                    stream =
                            partitioned(stream, stage.edge)
                                    .map(t -> Tuple3.of(t.f0, t.f1, HashChains.mix(t.f2, salt)))
                                    .returns(type)
                                    .name(name)
                                    .setParallelism(stage.parallelism);
                    break;
                case BROADCAST:
                    // every subtask reads every record and keeps its share: each still takes effect
                    // once
                    stream =
                            stream.broadcast()
                                    .filter(new Share())
                                    .name(name + "-share")
                                    .setParallelism(stage.parallelism)
                                    .map(t -> Tuple3.of(t.f0, t.f1, HashChains.mix(t.f2, salt)))
                                    .returns(type)
                                    .name(name)
                                    .setParallelism(stage.parallelism);
                    break;
                case KEYBY:
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
        }
        stream.keyBy(t -> t.f0)
                .process(new Chain())
                .name("chain")
                .setParallelism(shape.chainParallelism)
                .addSink(new CommittedLinesSink(output))
                .name("sink")
                .setParallelism(shape.chainParallelism);
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

    /** How a stage reads its predecessor's output. */
    public enum Edge {
        FORWARD,
        KEYBY,
        REBALANCE,
        RESCALE,
        /** Every record to every subtask, each keeping its share. */
        BROADCAST,
        /** The predecessor's output split in two and unioned again, keyed: two input gates. */
        UNION,
        /** The predecessor's output split in two and connected to a two-input keyed operator. */
        CONNECT;

        boolean keyed() {
            return this == KEYBY || this == UNION || this == CONNECT;
        }
    }

    /** What a stage does with a record. */
    public enum Kind {
        /** Stateless: mixes a constant into the record's value. */
        MAP,
        /** Keyed state: a digest per key over the records and the processing time. */
        STATE,
        /**
         * As {@link #STATE}, and a processing-time timer per key every 50 ms that emits a record.
         */
        TIMERS,
        /**
         * As {@link #STATE}, and an event-time timer per key every 100 of event time that emits a
         * record.
         */
        EVENT_TIMERS
    }

    /** One stage of a {@link Shape}. */
    public static final class Stage implements Serializable {
        private static final long serialVersionUID = 1L;
        public final Edge edge;
        public final Kind kind;
        public final int parallelism;

        public Stage(Edge edge, Kind kind, int parallelism) {
            if (edge.keyed() != (kind != Kind.MAP)) {
                throw new IllegalArgumentException(
                        "stateful stages are keyed, stateless ones are not: " + edge + ":" + kind);
            }
            if (parallelism < 1) {
                throw new IllegalArgumentException(
                        "parallelism must be at least 1, not " + parallelism);
            }
            this.edge = edge;
            this.kind = kind;
            this.parallelism = parallelism;
        }

        @Override
        public String toString() {
            return edge.name().toLowerCase() + ":" + kind.name().toLowerCase() + ":" + parallelism;
        }
    }

    /**
     * A generated job's shape: the source's parallelism, the stages, the hash chain's parallelism.
     */
    public static final class Shape implements Serializable {
        private static final long serialVersionUID = 1L;
        public final int sourceParallelism;
        public final List<Stage> stages;
        public final int chainParallelism;

        public Shape(int sourceParallelism, List<Stage> stages, int chainParallelism) {
            this.sourceParallelism = sourceParallelism;
            this.stages = List.copyOf(stages);
            this.chainParallelism = chainParallelism;
            int upstream = sourceParallelism;
            for (Stage stage : stages) {
                if (stage.edge == Edge.FORWARD && stage.parallelism != upstream) {
                    throw new IllegalArgumentException(
                            "a forward edge joins stages of one parallelism, not "
                                    + upstream
                                    + " and "
                                    + stage.parallelism);
                }
                upstream = stage.parallelism;
            }
        }

        /**
         * {@code edge:kind:parallelism} stages separated by {@code /}; the chain takes the last
         * stage's parallelism.
         */
        public static Shape parse(int sourceParallelism, String stages) {
            List<Stage> parsed = new ArrayList<>();
            for (String stage : stages.isBlank() ? new String[0] : stages.split("/")) {
                String[] parts = stage.trim().split(":");
                if (parts.length != 3) {
                    throw new IllegalArgumentException(
                            "a stage is edge:kind:parallelism, not '" + stage + "'");
                }
                parsed.add(
                        new Stage(
                                Edge.valueOf(parts[0].toUpperCase()),
                                Kind.valueOf(parts[1].toUpperCase()),
                                Integer.parseInt(parts[2])));
            }
            return new Shape(
                    sourceParallelism,
                    parsed,
                    parsed.isEmpty()
                            ? sourceParallelism
                            : parsed.get(parsed.size() - 1).parallelism);
        }

        /**
         * A random shape of depth 2 to {@code maxDepth} (source and chain included), parallelism 1
         * to {@code maxParallelism}; the same seed gives the same shape.
         */
        public static Shape random(long seed, int maxDepth, int maxParallelism) {
            Random random = new Random(seed);
            int sourceParallelism = 1 + random.nextInt(maxParallelism);
            int stages = random.nextInt(Math.max(1, maxDepth - 1));
            List<Stage> list = new ArrayList<>();
            int upstream = sourceParallelism;
            for (int i = 0; i < stages; i++) {
                Kind kind = Kind.values()[random.nextInt(Kind.values().length)];
                Edge edge;
                int parallelism = 1 + random.nextInt(maxParallelism);
                if (kind != Kind.MAP) {
                    edge =
                            new Edge[] {Edge.KEYBY, Edge.KEYBY, Edge.UNION, Edge.CONNECT}
                                    [random.nextInt(4)];
                } else {
                    edge =
                            new Edge[] {Edge.FORWARD, Edge.REBALANCE, Edge.RESCALE, Edge.BROADCAST}
                                    [random.nextInt(4)];
                    if (edge == Edge.FORWARD) {
                        parallelism = upstream;
                    }
                }
                list.add(new Stage(edge, kind, parallelism));
                upstream = parallelism;
            }
            return new Shape(sourceParallelism, list, 1 + random.nextInt(maxParallelism));
        }

        /** How many operators deep the job is: the source, the stages and the chain. */
        public int depth() {
            return stages.size() + 2;
        }

        /**
         * The job's tasks as Flink chains them: per vertex, its first and last stage (0 is the
         * source, {@code stages.size() + 1} the chain with its sink). A stage behind a forward edge
         * runs in its predecessor's task.
         */
        public List<int[]> vertices() {
            List<int[]> vertices = new ArrayList<>();
            int first = 0;
            for (int stage = 1; stage <= stages.size() + 1; stage++) {
                if (stage > stages.size() || stages.get(stage - 1).edge != Edge.FORWARD) {
                    vertices.add(new int[] {first, stage - 1});
                    first = stage;
                }
            }
            vertices.add(new int[] {first, stages.size() + 1});
            return vertices;
        }

        /** The parallelism of stage {@code stage} (0 the source, the last the chain). */
        public int parallelism(int stage) {
            return stage == 0
                    ? sourceParallelism
                    : stage > stages.size() ? chainParallelism : stages.get(stage - 1).parallelism;
        }

        /** The index in {@link #vertices()} of the Flink vertex named {@code name}. */
        public int vertexOf(String name) {
            String first = name.split(" -> ")[0];
            int stage;
            if (first.startsWith("Source: ")) {
                stage = 0;
            } else if (first.equals("chain")) {
                stage = stages.size() + 1;
            } else if (first.startsWith("stage")) {
                stage = Integer.parseInt(first.substring("stage".length(), first.indexOf('-')));
            } else {
                throw new IllegalArgumentException(
                        "No stage of " + this + " starts vertex '" + name + "'");
            }
            List<int[]> vertices = vertices();
            for (int v = 0; v < vertices.size(); v++) {
                if (vertices.get(v)[0] == stage) {
                    return v;
                }
            }
            throw new IllegalArgumentException(
                    "No vertex of " + this + " starts with stage " + stage + " ('" + name + "')");
        }

        /**
         * The subtasks of vertex {@code vertex + 1} that read subtask {@code subtask} of vertex
         * {@code vertex}, as Flink connects them: all of them behind a keyBy or rebalance; behind
         * rescale, a contiguous range (Flink's pointwise distribution).
         */
        public List<Integer> consumers(int vertex, int subtask) {
            List<int[]> vertices = vertices();
            if (vertex + 1 >= vertices.size()) {
                return List.of();
            }
            int next = vertices.get(vertex + 1)[0];
            int sources = parallelism(vertices.get(vertex)[1]);
            int targets = parallelism(next);
            Edge edge = next > stages.size() ? Edge.KEYBY : stages.get(next - 1).edge;
            List<Integer> consumers = new ArrayList<>();
            if (edge != Edge.RESCALE) {
                for (int t = 0; t < targets; t++) {
                    consumers.add(t);
                }
            } else if (sources >= targets) {
                for (int t = 0; t < targets; t++) {
                    if (subtask >= t * sources / targets && subtask < (t + 1) * sources / targets) {
                        consumers.add(t);
                    }
                }
            } else {
                for (int t = (subtask * targets + sources - 1) / sources;
                        t < ((subtask + 1) * targets + sources - 1) / sources;
                        t++) {
                    consumers.add(t);
                }
            }
            return consumers;
        }

        @Override
        public String toString() {
            return "source:"
                    + sourceParallelism
                    + "/"
                    + stages.stream().map(Stage::toString).collect(Collectors.joining("/"))
                    + (stages.isEmpty() ? "" : "/")
                    + "chain:"
                    + chainParallelism;
        }
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

        void open(org.apache.flink.api.common.functions.RuntimeContext context) {
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
