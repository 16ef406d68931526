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

package io.clonos.cli;

import io.clonos.connector.kafka.OutputHeaders;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A topic's records as a {@code read_committed} consumer reads them from the beginning to the end
 * offsets it found, with the marks of the Clonos Kafka sink counted.
 */
final class CommittedRecords {

    private final List<String> values;
    private final long unmarked;
    private final long divergent;

    private CommittedRecords(List<String> values, long unmarked, long divergent) {
        this.values = values;
        this.unmarked = unmarked;
        this.divergent = divergent;
    }

    static CommittedRecords read(String bootstrapServers, String topic) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        List<String> values = new ArrayList<>();
        long unmarked = 0;
        long divergent = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(topic)) {
                partitions.add(new TopicPartition(topic, info.partition()));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = new HashMap<>(consumer.endOffsets(partitions));
            end.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
            while (!end.isEmpty()) {
                for (ConsumerRecord<String, String> record :
                        consumer.poll(Duration.ofMillis(200))) {
                    values.add(record.value());
                    if (record.headers().lastHeader(OutputHeaders.POSITION) == null) {
                        unmarked++;
                    }
                    if (record.headers().lastHeader(OutputHeaders.DIVERGENT) != null) {
                        divergent++;
                    }
                }
                end.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
            }
        }
        return new CommittedRecords(values, unmarked, divergent);
    }

    List<String> values() {
        return values;
    }

    /** Records without the Clonos sink's position header: published by another sink. */
    long unmarked() {
        return unmarked;
    }

    /** Records the Clonos sink marked as diverging from its predecessor's output. */
    long divergent() {
        return divergent;
    }
}
