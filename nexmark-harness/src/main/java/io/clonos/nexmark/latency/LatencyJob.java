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

package io.clonos.nexmark.latency;

import io.clonos.connector.kafka.ClonosKafkaSink;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * The output-latency benchmark's job: numbers, paced to a rate and stamped with the wall-clock time
 * they are emitted at (the event time), a keyed stage with state and random numbers, and a Kafka
 * sink of the system under test. A record's line is {@code id,emitted-millis,...}; its key is its
 * id.
 */
@Internal
final class LatencyJob {

    /** The sink under test. */
    enum System {
        CLONOS("Clonos"),
        FLINK_KAFKA_SINK("Flink KafkaSink");

        final String label;

        System(String label) {
            this.label = label;
        }
    }

    /** {@code execution.buffer-timeout} of the job: how long a network buffer may wait to fill. */
    static final long BUFFER_TIMEOUT_MS = 5;

    private LatencyJob() {}

    /**
     * {@code records} records at {@code rate} per second in all ({@code 0}: as fast as the job
     * takes them), to {@code topic}.
     */
    static void build(
            StreamExecutionEnvironment env,
            System system,
            String bootstrapServers,
            String topic,
            long records,
            long rate,
            int parallelism,
            long checkpointIntervalMs) {
        env.setParallelism(parallelism);
        env.enableCheckpointing(checkpointIntervalMs);
        // Flink's default of 100 ms would dominate any sink's latency; both systems get this
        env.setBufferTimeout(BUFFER_TIMEOUT_MS);
        DataStream<String> lines =
                env.fromSource(
                                new NumberSequenceSource(0, records - 1),
                                WatermarkStrategy.noWatermarks(),
                                "numbers")
                        .map(new Paced(rate / (double) parallelism))
                        .name("paced")
                        .keyBy(line -> Long.parseLong(line.substring(0, line.indexOf(','))) % 128)
                        .process(new Stamp())
                        .name("stamp");
        lines.sinkTo(sink(system, bootstrapServers, topic, checkpointIntervalMs)).name("sink");
    }

    private static Sink<String> sink(
            System system, String bootstrapServers, String topic, long checkpointIntervalMs) {
        KafkaRecordSerializationSchema<String> serializer =
                KafkaRecordSerializationSchema.<String>builder()
                        .setTopic(topic)
                        .setKeySerializationSchema(
                                line ->
                                        line.substring(0, line.indexOf(','))
                                                .getBytes(StandardCharsets.UTF_8))
                        .setValueSerializationSchema(new SimpleStringSchema())
                        .build();
        if (system == System.CLONOS) {
            return ClonosKafkaSink.<String>builder()
                    .setBootstrapServers(bootstrapServers)
                    .setTopics(topic)
                    .setRecordSerializer(serializer)
                    .build();
        }
        return KafkaSink.<String>builder()
                .setBootstrapServers(bootstrapServers)
                .setRecordSerializer(serializer)
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix(topic)
                .setProperty(
                        "transaction.timeout.ms", String.valueOf(checkpointIntervalMs + 120_000))
                .build();
    }

    /** Emits each number at its turn of the subtask's share of the rate, with its time. */
    static final class Paced extends RichMapFunction<Long, String> {

        private final double perSecond;
        private transient long nextNanos;

        Paced(double perSecond) {
            this.perSecond = perSecond;
        }

        @Override
        public void open(OpenContext context) {
            nextNanos = java.lang.System.nanoTime();
        }

        @Override
        public String map(Long id) {
            if (perSecond > 0) {
                nextNanos += (long) (1e9 / perSecond);
                long wait = nextNanos - java.lang.System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
            }
            return id + "," + java.lang.System.currentTimeMillis();
        }
    }

    /** Counts per key and draws a random number per record. */
    static final class Stamp extends KeyedProcessFunction<Long, String, String> {

        private transient ValueState<Long> count;

        @Override
        public void open(OpenContext context) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        }

        @Override
        public void processElement(String line, Context ctx, Collector<String> out)
                throws Exception {
            long seen = count.value() == null ? 1 : count.value() + 1;
            count.update(seen);
            out.collect(line + "," + seen + "," + ThreadLocalRandom.current().nextInt(1000));
        }
    }
}
