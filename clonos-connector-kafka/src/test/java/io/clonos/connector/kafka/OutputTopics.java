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

package io.clonos.connector.kafka;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** The sink tests' output topics: created, watched and read as a consumer reads them. */
final class OutputTopics {

    /** One record as a read_committed consumer sees it, with the marks of the Clonos sink. */
    record Record(
            String value, int partition, long offset, boolean divergent, boolean positioned) {}

    private OutputTopics() {}

    static String create(String bootstrapServers, String topic, int partitions) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        try (Admin admin = Admin.create(props)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
        return topic;
    }

    /** Every record of the topic, by key, as a read_committed consumer reads them. */
    static Map<String, List<Record>> readCommitted(
            String bootstrapServers, String topic, int partitions) {
        Properties props = consumerProperties(bootstrapServers);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Map<String, List<Record>> byId = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> assigned = partitions(topic, partitions);
            consumer.assign(assigned);
            consumer.seekToBeginning(assigned);
            Map<TopicPartition, Long> end = new HashMap<>(consumer.endOffsets(assigned));
            end.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
            while (!end.isEmpty()) {
                for (ConsumerRecord<String, String> record :
                        consumer.poll(Duration.ofMillis(200))) {
                    byId.computeIfAbsent(record.key(), k -> new ArrayList<>())
                            .add(
                                    new Record(
                                            record.value(),
                                            record.partition(),
                                            record.offset(),
                                            record.headers().lastHeader(OutputHeaders.DIVERGENT)
                                                    != null,
                                            record.headers().lastHeader(OutputHeaders.POSITION)
                                                    != null));
                }
                end.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
            }
        }
        return byId;
    }

    static Map<String, List<Record>> duplicates(Map<String, List<Record>> read) {
        return read.entrySet().stream()
                .filter(e -> e.getValue().size() > 1)
                .collect(
                        Collectors.toMap(
                                Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a, TreeMap::new));
    }

    /** Waits until the topic holds {@code records} records, committed or not. */
    static void awaitPublished(String bootstrapServers, String topic, int partitions, long records)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(consumerProperties(bootstrapServers))) {
            while (consumer.endOffsets(partitions(topic, partitions)).values().stream()
                            .mapToLong(Long::longValue)
                            .sum()
                    < records) {
                assertThat(System.nanoTime()).as("records published in time").isLessThan(deadline);
                Thread.sleep(20);
            }
        }
    }

    private static Properties consumerProperties(String bootstrapServers) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return props;
    }

    private static List<TopicPartition> partitions(String topic, int partitions) {
        List<TopicPartition> all = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            all.add(new TopicPartition(topic, p));
        }
        return all;
    }
}
