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
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * An ordinary Flink job, with no Clonos code in it: the numbers 1..count, spread over keys by
 * {@code n % keys}, and a keyed running count and sum per key, written as lines {@code
 * key,count,sum}. A run is correct when, for every key, the line with the highest count holds the
 * sum of that key's numbers; the job checkpoints while it runs, so its keyed state is in every
 * checkpoint.
 *
 * <p>Arguments: {@code --count} numbers (default 20000), {@code --rate} numbers per second (default
 * 4000), {@code --keys} (default 8), {@code --checkpoint-interval} ms (default 500), {@code
 * --output} directory (default: print to the TaskManagers' standard output).
 */
public final class RunningSumJob {

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        long count = params.getLong("count", 20_000);
        int rate = params.getInt("rate", 4_000);
        int keys = params.getInt("keys", 8);
        long checkpointInterval = params.getLong("checkpoint-interval", 500);
        String output = params.get("output");

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(checkpointInterval);

        DataStream<String> sums =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        index -> index + 1,
                                        count,
                                        RateLimiterStrategy.perSecond(rate),
                                        Types.LONG),
                                WatermarkStrategy.noWatermarks(),
                                "numbers")
                        .map(n -> Tuple2.of(n % keys, n))
                        .returns(Types.TUPLE(Types.LONG, Types.LONG))
                        .name("assign-key")
                        .keyBy(tagged -> tagged.f0)
                        .process(new RunningSum())
                        .name("running-sum");

        if (output == null) {
            sums.print();
        } else {
            sums.sinkTo(new LineFileSink(output)).name("line-file-sink");
        }
        env.execute("running-sum");
    }

    /** Keyed running count and sum, emitted after every number. */
    static final class RunningSum extends KeyedProcessFunction<Long, Tuple2<Long, Long>, String> {

        private transient ValueState<Tuple2<Long, Long>> countAndSum;

        @Override
        public void open(Configuration parameters) {
            countAndSum =
                    getRuntimeContext()
                            .getState(
                                    new ValueStateDescriptor<>(
                                            "count-and-sum", Types.TUPLE(Types.LONG, Types.LONG)));
        }

        @Override
        public void processElement(Tuple2<Long, Long> tagged, Context ctx, Collector<String> out)
                throws Exception {
            Tuple2<Long, Long> current = countAndSum.value();
            Tuple2<Long, Long> next =
                    current == null
                            ? Tuple2.of(1L, tagged.f1)
                            : Tuple2.of(current.f0 + 1, current.f1 + tagged.f1);
            countAndSum.update(next);
            out.collect(tagged.f0 + "," + next.f0 + "," + next.f1);
        }
    }

    private RunningSumJob() {}
}
