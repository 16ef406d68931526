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

package io.clonos.nexmark.failure;

import org.apache.flink.annotation.Internal;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongUnaryOperator;

/**
 * The failure experiment's Kafka side: each run's input and output topics, and its committed output
 * as a consumer that reads committed records sees it.
 */
@Internal
final class FailureTopics {

    private final Admin admin;
    private final String bootstrap;
    private final int inputPartitions;
    private final int outputPartitions;

    FailureTopics(Admin admin, String bootstrap, int inputPartitions, int outputPartitions) {
        this.admin = admin;
        this.bootstrap = bootstrap;
        this.inputPartitions = inputPartitions;
        this.outputPartitions = outputPartitions;
    }

    String bootstrap() {
        return bootstrap;
    }

    /** Fails with a clear message when no broker answers. */
    void awaitBroker() throws Exception {
        try {
            admin.describeCluster().nodes().get(30, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException(
                    "No Kafka broker answered at "
                            + bootstrap
                            + " within 30 s (--bootstrap-servers).",
                    e);
        }
    }

    /**
     * The input topic, its partitions, and the output topic, one partition per sink subtask,
     * stamped with the time records reach the broker. Neither expires records by time: the events'
     * times lie in the generator's past (its base time), which time-based retention would delete at
     * once.
     */
    void create(String input, String output) throws Exception {
        admin.createTopics(
                        List.of(
                                new NewTopic(input, inputPartitions, (short) 1)
                                        .configs(Map.of("retention.ms", "-1")),
                                new NewTopic(output, outputPartitions, (short) 1)
                                        .configs(
                                                Map.of(
                                                        "retention.ms",
                                                        "-1",
                                                        "message.timestamp.type",
                                                        "LogAppendTime"))))
                .all()
                .get();
    }

    void delete(String... topics) {
        admin.deleteTopics(List.of(topics));
    }

    /** How many records the output topic holds. */
    long written(String output) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        partitions(output).forEach(partition -> latest.put(partition, OffsetSpec.latest()));
        return admin.listOffsets(latest).all().get().values().stream()
                .mapToLong(info -> info.offset())
                .sum();
    }

    /**
     * Every committed record of {@code output}, with when it reached the broker and when its input
     * was due ({@code dueAt} of its event time).
     */
    List<FailureFigures.Output> committed(String output, LongUnaryOperator dueAt) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        List<FailureFigures.Output> outputs = new ArrayList<>();
        try (KafkaConsumer<byte[], String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = partitions(output);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                for (ConsumerRecord<byte[], String> record :
                        consumer.poll(Duration.ofMillis(200))) {
                    Header eventTime = record.headers().lastHeader(FailureJob.EVENT_TIME_HEADER);
                    outputs.add(
                            new FailureFigures.Output(
                                    record.timestamp(),
                                    dueAt.applyAsLong(ByteBuffer.wrap(eventTime.value()).getLong()),
                                    record.partition(),
                                    record.value()));
                }
            }
        }
        return outputs;
    }

    private List<TopicPartition> partitions(String topic) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (int p = 0; p < outputPartitions; p++) {
            partitions.add(new TopicPartition(topic, p));
        }
        return partitions;
    }
}
