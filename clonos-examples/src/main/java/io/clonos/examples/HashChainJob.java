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
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.TimerService;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An ordinary Flink job, with no Clonos code in it, whose output depends on every nondeterministic
 * choice a task makes: two sources feed one keyed operator (the order in which it reads them
 * differs on every run), which reads the processing time for every record and fires processing-time
 * timers of all keys at the same instants; processing-time windows chained to it summarize each
 * key's links. Every effect (a record, a timer or a window) extends its key's hash chain, written
 * as a line {@code key,sequence,previous digest,digest,input}; see {@link HashChains} for what a
 * correct output is. The sink commits a checkpoint's lines only when the checkpoint completes
 * ({@link CommittedLinesSink}).
 *
 * <p>Arguments: {@code --count} numbers per source (default 20000), {@code --rate} numbers per
 * second per source (default 2000), {@code --left-rate} numbers per second of the left source
 * (default the rate; a high one makes it finish early), {@code --connected} (the left numbers reach
 * the chain as a second input rather than united with the right ones: a side input's shape, whose
 * source finishes while the other runs), {@code --chained-sources} (both sources chained to an
 * operator that merges them, {@link SourcesMerge}, before the chain: the merge's task interleaves
 * their records as they happen to be available), {@code --keys} (default 8), {@code
 * --checkpoint-interval} ms (default 300), {@code --output} directory (required), {@code --audit}
 * (the sink audits its hash chains at the end and publishes the counts as accumulators: {@link
 * CommittedLinesSink#audited}), {@code --sink-slot-sharing-group} (the sink in a slot sharing group
 * of this name, so that its slot holds nothing else: a TaskManager that runs consumers only).
 */
public final class HashChainJob {

    /**
     * Window links carry their key plus this, to keep their chains apart from the records' ones.
     */
    public static final long WINDOW_KEYS = 1000;

    /** The job's sources, as its hash chains name them. */
    public static String[] sources() {
        return new String[] {"left", "right"};
    }

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        long count = params.getLong("count", 20_000);
        int rate = params.getInt("rate", 2_000);
        int leftRate = params.getInt("left-rate", rate);
        boolean connected = params.has("connected");
        boolean chainedSources = params.has("chained-sources");
        int keys = params.getInt("keys", 8);
        long checkpointInterval = params.getLong("checkpoint-interval", 300);
        String output = params.getRequired("output");

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(checkpointInterval);
        Map<String, DataStream<Tuple3<Long, String, Long>>> numbers = new LinkedHashMap<>();
        TypeInformation<Tuple3<Long, String, Long>> tuples =
                Types.TUPLE(Types.LONG, Types.STRING, Types.LONG);
        for (String source : sources()) {
            // tagged by the source itself, so that nothing stands between it and the merge
            numbers.put(
                    source,
                    env.fromSource(
                            new DataGeneratorSource<>(
                                    index ->
                                            Tuple3.of(
                                                    (index + 1) % keys,
                                                    source + ":" + (index + 1),
                                                    index + 1),
                                    count,
                                    RateLimiterStrategy.perSecond(
                                            source.equals("left") ? leftRate : rate),
                                    tuples),
                            WatermarkStrategy.noWatermarks(),
                            source));
        }
        DataStream<Tuple3<Long, String, Long>> left = numbers.get("left");
        DataStream<Tuple3<Long, String, Long>> right = numbers.get("right");
        DataStream<String> links =
                chainedSources
                        ? SourcesMerge.of(env, "merge", tuples, left, right)
                                .keyBy(t -> t.f0)
                                .process(new HashChain())
                                .name("chain")
                        : connected
                                ? left.keyBy(t -> t.f0)
                                        .connect(right.keyBy(t -> t.f0))
                                        .process(new CoHashChain())
                                        .name("chain")
                                : left.union(right)
                                        .keyBy(t -> t.f0)
                                        .process(new HashChain())
                                        .name("chain");
        DataStream<String> windows =
                DataStreamUtils.reinterpretAsKeyedStream(links, HashChains::keyOf, Types.LONG)
                        .window(TumblingProcessingTimeWindows.of(Duration.ofMillis(100)))
                        .process(new WindowChain())
                        .name("window");
        DataStreamSink<String> sink =
                links.union(windows)
                        .addSink(
                                params.has("audit")
                                        ? CommittedLinesSink.audited(output, sources(), count)
                                        : new CommittedLinesSink(output))
                        .name("sink")
                        .setParallelism(1)
                        .disableChaining();
        if (params.has("sink-slot-sharing-group")) {
            sink.slotSharingGroup(params.getRequired("sink-slot-sharing-group"));
        }
        env.execute("hash-chains");
    }

    /**
     * Extends each key's chain with every record and every timer; digests cover the processing
     * time.
     */
    static final class HashChain
            extends KeyedProcessFunction<Long, Tuple3<Long, String, Long>, String> {
        private transient ValueState<Tuple2<Long, Long>> chain;

        @Override
        public void open(Configuration parameters) {
            chain = chainState(getRuntimeContext());
        }

        @Override
        public void processElement(
                Tuple3<Long, String, Long> in, Context ctx, Collector<String> out)
                throws Exception {
            out.collect(record(chain, ctx.timerService(), in));
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out)
                throws Exception {
            out.collect(timer(chain, ctx.timerService(), ctx.getCurrentKey(), timestamp));
        }
    }

    /** The same chains over two inputs, connected instead of united. */
    static final class CoHashChain
            extends KeyedCoProcessFunction<
                    Long, Tuple3<Long, String, Long>, Tuple3<Long, String, Long>, String> {
        private transient ValueState<Tuple2<Long, Long>> chain;

        @Override
        public void open(Configuration parameters) {
            chain = chainState(getRuntimeContext());
        }

        @Override
        public void processElement1(
                Tuple3<Long, String, Long> in, Context ctx, Collector<String> out)
                throws Exception {
            out.collect(record(chain, ctx.timerService(), in));
        }

        @Override
        public void processElement2(
                Tuple3<Long, String, Long> in, Context ctx, Collector<String> out)
                throws Exception {
            out.collect(record(chain, ctx.timerService(), in));
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out)
                throws Exception {
            out.collect(timer(chain, ctx.timerService(), ctx.getCurrentKey(), timestamp));
        }
    }

    private static ValueState<Tuple2<Long, Long>> chainState(RuntimeContext context) {
        return context.getState(
                new ValueStateDescriptor<>("seq-and-digest", Types.TUPLE(Types.LONG, Types.LONG)));
    }

    /** A record's link; it registers a timer due at the same instant for all keys. */
    private static String record(
            ValueState<Tuple2<Long, Long>> chain,
            TimerService timers,
            Tuple3<Long, String, Long> in)
            throws Exception {
        long now = timers.currentProcessingTime();
        timers.registerProcessingTimeTimer(now - now % 50 + 50);
        return HashChains.link(
                chain, in.f0, HashChains.mix(HashChains.mix(in.f2, in.f1.hashCode()), now), in.f1);
    }

    private static String timer(
            ValueState<Tuple2<Long, Long>> chain, TimerService timers, long key, long timestamp)
            throws Exception {
        long now = timers.currentProcessingTime();
        return HashChains.link(
                chain, key, HashChains.mix(timestamp, now), "timer:" + key + ":" + timestamp);
    }

    /** Per key and window: a link of the key's window chain over the links the window received. */
    public static final class WindowChain
            extends ProcessWindowFunction<String, String, Long, TimeWindow> {
        @Override
        public void process(
                Long key, Context context, Iterable<String> links, Collector<String> out)
                throws Exception {
            long value = context.window().getEnd();
            for (String link : links) {
                value = HashChains.mix(value, HashChains.digestOf(link));
            }
            ValueState<Tuple2<Long, Long>> chain =
                    context.globalState()
                            .getState(
                                    new ValueStateDescriptor<>(
                                            "window-chain", Types.TUPLE(Types.LONG, Types.LONG)));
            out.collect(
                    HashChains.link(
                            chain,
                            WINDOW_KEYS + key,
                            value,
                            "window:" + key + ":" + context.window().getEnd()));
        }
    }

    private HashChainJob() {}
}
