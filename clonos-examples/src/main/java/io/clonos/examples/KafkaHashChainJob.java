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
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.time.Duration;

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
        env.fromSource(
                        source,
                        // event time is the number, increasing within each partition
                        WatermarkStrategy.<String>forMonotonousTimestamps()
                                .withTimestampAssigner((line, previous) -> Long.parseLong(line))
                                .withIdleness(
                                        Duration.ofMillis(params.getLong("idleness-ms", 2_000))),
                        "kafka")
                .map(
                        line -> {
                            long n = Long.parseLong(line);
                            return Tuple3.of(n % keys, SOURCE + ":" + n, n);
                        })
                .returns(Types.TUPLE(Types.LONG, Types.STRING, Types.LONG))
                .name("kafka-tag")
                .keyBy(t -> t.f0)
                .process(new HashChainJob.HashChain())
                .name("chain")
                .addSink(new CommittedLinesSink(params.getRequired("output")))
                .name("sink")
                .setParallelism(1)
                .disableChaining();
        env.execute("kafka-hash-chains");
    }
}
