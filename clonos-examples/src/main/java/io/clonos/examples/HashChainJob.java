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
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.time.Duration;

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
 * (default the rate; a high one makes it finish early, a side input's shape), {@code --keys}
 * (default 8), {@code --checkpoint-interval} ms (default 300), {@code --output} directory
 * (required).
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
        int keys = params.getInt("keys", 8);
        long checkpointInterval = params.getLong("checkpoint-interval", 300);
        String output = params.getRequired("output");

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(checkpointInterval);
        DataStream<Tuple3<Long, String, Long>> inputs = null;
        for (String source : sources()) {
            DataStream<Tuple3<Long, String, Long>> numbers =
                    env.fromSource(
                                    new DataGeneratorSource<>(
                                            index -> index + 1,
                                            count,
                                            RateLimiterStrategy.perSecond(
                                                    source.equals("left") ? leftRate : rate),
                                            Types.LONG),
                                    WatermarkStrategy.noWatermarks(),
                                    source)
                            .map(n -> Tuple3.of(n % keys, source + ":" + n, n))
                            .returns(Types.TUPLE(Types.LONG, Types.STRING, Types.LONG))
                            .name(source + "-tag");
            inputs = inputs == null ? numbers : inputs.union(numbers);
        }
        DataStream<String> links = inputs.keyBy(t -> t.f0).process(new HashChain()).name("chain");
        DataStream<String> windows =
                DataStreamUtils.reinterpretAsKeyedStream(links, HashChains::keyOf, Types.LONG)
                        .window(TumblingProcessingTimeWindows.of(Duration.ofMillis(100)))
                        .process(new WindowChain())
                        .name("window");
        links.union(windows)
                .addSink(new CommittedLinesSink(output))
                .name("sink")
                .setParallelism(1)
                .disableChaining();
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
            long now = ctx.timerService().currentProcessingTime();
            // the timers of all keys are due at the same instants
            ctx.timerService().registerProcessingTimeTimer(now - now % 50 + 50);
            out.collect(
                    HashChains.link(
                            chain,
                            in.f0,
                            HashChains.mix(HashChains.mix(in.f2, in.f1.hashCode()), now),
                            in.f1));
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out)
                throws Exception {
            long now = ctx.timerService().currentProcessingTime();
            out.collect(
                    HashChains.link(
                            chain,
                            ctx.getCurrentKey(),
                            HashChains.mix(timestamp, now),
                            "timer:" + ctx.getCurrentKey() + ":" + timestamp));
        }
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
