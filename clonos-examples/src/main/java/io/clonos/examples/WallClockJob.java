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
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

import java.time.Instant;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A job whose own code reads the clock and draws random numbers the way people write it, with no
 * Clonos API: a keyed process function stamps each record with {@code System.currentTimeMillis()},
 * {@code System.nanoTime()} and {@code Instant.now()}, and mixes in draws of {@code new Random()},
 * {@code Math.random()}, {@code ThreadLocalRandom} and {@code UUID.randomUUID()}, into a digest per
 * key in keyed state; a rebalanced map and the hash chains ({@link HashChains}) follow, into a sink
 * that commits on checkpoints ({@link CommittedLinesSink}). A recovered stamping task that does not
 * read its predecessor's clock and numbers breaks the chains. Arguments: {@code --count} (default
 * 10000), {@code --rate} per second per source subtask (default 500), {@code --parallelism}
 * (default 2), {@code --checkpoint-interval} ms (default 500), {@code --output}.
 */
public final class WallClockJob {

    /**
     * The source's records are inputs {@code s:1} to {@code s:count}, as for {@link GeneratedJob}.
     */
    public static String[] sources() {
        return GeneratedJob.sources();
    }

    /** The name of the stamping operator. */
    public static final String STAMP = "stamp";

    private WallClockJob() {}

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(params.getInt("parallelism", 2));
        build(
                env,
                params.getLong("count", 10_000),
                params.getInt("rate", 500),
                params.getLong("checkpoint-interval", 500),
                params.getRequired("output"));
        env.execute("wall clock");
    }

    /** Adds the job to {@code env}, at its parallelism. */
    public static void build(
            StreamExecutionEnvironment env,
            long count,
            int ratePerSubtask,
            long checkpointInterval,
            String output) {
        env.enableCheckpointing(checkpointInterval);
        TypeInformation<Tuple3<Long, String, Long>> type =
                Types.TUPLE(Types.LONG, Types.STRING, Types.LONG);
        env.fromSource(
                        new DataGeneratorSource<>(
                                index ->
                                        Tuple3.of(
                                                (index + 1) % GeneratedJob.KEYS,
                                                "s:" + (index + 1),
                                                index + 1),
                                count,
                                RateLimiterStrategy.perSecond(
                                        ratePerSubtask * env.getParallelism()),
                                type),
                        WatermarkStrategy.noWatermarks(),
                        "source")
                .keyBy(t -> t.f0)
                .process(new Stamp())
                .returns(type)
                .name(STAMP)
                .rebalance()
                .map(t -> t)
                .returns(type)
                .name("map")
                .keyBy(t -> t.f0)
                .process(new GeneratedJob.Chain())
                .name("chain")
                .addSink(new CommittedLinesSink(output))
                .name("sink");
    }

    /** Mixes the clock and random draws of plain Java into a digest per key. */
    public static final class Stamp
            extends KeyedProcessFunction<
                    Long, Tuple3<Long, String, Long>, Tuple3<Long, String, Long>> {
        private static final long serialVersionUID = 1L;

        private transient ValueState<Long> digest;
        private transient Random random;

        @Override
        public void open(OpenContext openContext) {
            digest = getRuntimeContext().getState(new ValueStateDescriptor<>("digest", Types.LONG));
            random = new Random();
        }

        @Override
        public void processElement(
                Tuple3<Long, String, Long> in,
                Context context,
                Collector<Tuple3<Long, String, Long>> out)
                throws Exception {
            long started = System.nanoTime();
            long value = HashChains.mix(in.f2, System.currentTimeMillis());
            value = HashChains.mix(value, Instant.now().toEpochMilli());
            value = HashChains.mix(value, random.nextLong());
            value = HashChains.mix(value, Double.doubleToLongBits(Math.random()));
            value = HashChains.mix(value, ThreadLocalRandom.current().nextInt(1_000_000));
            value = HashChains.mix(value, UUID.randomUUID().getLeastSignificantBits());
            value = HashChains.mix(value, System.nanoTime() - started);
            Long previous = digest.value();
            long next = HashChains.mix(previous == null ? 0 : previous, value);
            digest.update(next);
            out.collect(Tuple3.of(in.f0, in.f1, next));
        }
    }
}
