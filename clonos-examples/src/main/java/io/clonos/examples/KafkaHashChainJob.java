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
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The hash-chain job on a Kafka topic: the numbers of {@code --topic} (each record a decimal
 * number, in increasing order within each partition) read by Flink's Kafka source with partition
 * discovery ({@code --discovery-interval-ms}, default 1000) and idleness ({@code --idleness-ms},
 * default 2000), keyed by {@code n mod --keys} into {@link HashChainJob}'s hash chain (processing
 * time and processing-time timers in every digest), committed by {@link CommittedLinesSink} to
 * {@code --output}; parallelism {@code --parallelism} (default 2). It runs until cancelled. With
 * more partitions than source subtasks, each reader interleaves several partitions as its fetcher
 * delivers them, and partitions added to the topic while the job runs are assigned to the readers
 * as they come.
 *
 * <p>With {@code --output-topic}, the chains go to that topic instead, through Flink's {@code
 * KafkaSink} with {@code DeliveryGuarantee.EXACTLY_ONCE} (an unchanged job's exactly-once output;
 * records keyed by nothing, the link as the value), and the tagging draws a random number into
 * every record's digest: a recovered tagging task that does not draw its predecessor's numbers
 * breaks the chains. {@code --sink-slot-sharing-group} puts the sink in a slot sharing group of its
 * own, as for {@link HashChainJob}.
 *
 * <p>Kafka's connector is not in the distribution's {@code lib/}: submit the job with its jars
 * ({@code flink-connector-kafka}, {@code kafka-clients}) in {@code pipeline.classpaths}.
 */
public final class KafkaHashChainJob {

    /** The job's records are inputs {@code kafka:n}. */
    public static String[] sources() {
        return new String[] {SOURCE};
    }

    private static final String SOURCE = "kafka";

    private KafkaHashChainJob() {}

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        int keys = params.getInt("keys", 8);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(params.getInt("parallelism", 2));
        env.enableCheckpointing(params.getLong("checkpoint-interval", 500));
        KafkaSource<String> source =
                KafkaSource.<String>builder()
                        .setBootstrapServers(params.getRequired("bootstrap-servers"))
                        .setTopics(params.getRequired("topic"))
                        .setGroupId("clonos-hash-chains")
                        .setStartingOffsets(OffsetsInitializer.earliest())
                        .setValueOnlyDeserializer(new SimpleStringSchema())
                        .setProperty(
                                "partition.discovery.interval.ms",
                                params.get("discovery-interval-ms", "1000"))
                        .setProperty("commit.offsets.on.checkpoint", "false")
                        .build();
        String outputTopic = params.get("output-topic");
        boolean random = outputTopic != null;
        SingleOutputStreamOperator<String> chains =
                env.fromSource(
                                source,
                                // event time is the number, increasing within each partition
                                WatermarkStrategy.<String>forMonotonousTimestamps()
                                        .withTimestampAssigner(
                                                (line, previous) -> Long.parseLong(line))
                                        .withIdleness(
                                                Duration.ofMillis(
                                                        params.getLong("idleness-ms", 2_000))),
                                "kafka")
                        .map(
                                line -> {
                                    long n = Long.parseLong(line);
                                    long digested =
                                            random ? ThreadLocalRandom.current().nextLong() : n;
                                    return Tuple3.of(n % keys, SOURCE + ":" + n, digested);
                                })
                        .returns(Types.TUPLE(Types.LONG, Types.STRING, Types.LONG))
                        .name("kafka-tag")
                        .keyBy(t -> t.f0)
                        .process(new HashChainJob.HashChain())
                        .name("chain");
        DataStreamSink<String> sink =
                outputTopic == null
                        ? chains.addSink(new CommittedLinesSink(params.getRequired("output")))
                                .disableChaining()
                        // Flink chains the sink's committer to its writer, as a job leaves it
                        : chains.sinkTo(exactlyOnceKafkaSink(params, outputTopic));
        sink.name("sink").setParallelism(1);
        if (params.has("sink-slot-sharing-group")) {
            sink.slotSharingGroup(params.getRequired("sink-slot-sharing-group"));
        }
        env.execute("kafka-hash-chains");
    }

    /** Flink's exactly-once Kafka sink, as a job builds it. */
    private static KafkaSink<String> exactlyOnceKafkaSink(ParameterTool params, String topic) {
        return KafkaSink.<String>builder()
                .setBootstrapServers(params.getRequired("bootstrap-servers"))
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix("kafka-hash-chains")
                // within the broker's transaction.max.timeout.ms (15 min by default)
                .setProperty("transaction.timeout.ms", "600000")
                .setRecordSerializer(
                        KafkaRecordSerializationSchema.<String>builder()
                                .setTopic(topic)
                                .setValueSerializationSchema(new SimpleStringSchema())
                                .build())
                .build();
    }
}
