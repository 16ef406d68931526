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

import io.clonos.kafka.broker.EmbeddedKafka;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** The read-back against a broker: which records of a topic it reads. */
class ReadBackTest {

    private static final byte[] WRITER = new byte[OutputHeaders.WRITER_ID_BYTES];

    private static EmbeddedKafka kafka;

    @BeforeAll
    static void startKafka() throws Exception {
        kafka = EmbeddedKafka.start();
    }

    @AfterAll
    static void stopKafka() {
        if (kafka != null) {
            kafka.close();
        }
    }

    /**
     * Records before the checkpoint's offsets are not read, even when they carry positions at or
     * after the one asked for (as a predecessor's records do that a later checkpoint covers).
     */
    @Test
    void readsEachPartitionFromTheCheckpointsOffset() throws Exception {
        String topic = OutputTopics.create(kafka.bootstrapServers(), "read-back-offsets", 2);
        List<RecordMetadata> written = publish(topic, 8);

        Map<TopicPartition, Long> readFrom = new HashMap<>();
        readFrom.put(new TopicPartition(topic, 0), 2L);
        readFrom.put(new TopicPartition(topic, 1), 3L);
        PublishedOutput published = read(topic, readFrom);

        long expected =
                written.stream().filter(m -> m.offset() >= (m.partition() == 0 ? 2L : 3L)).count();
        assertThat(expected).isEqualTo(3);
        assertThat(published.records()).isEqualTo(expected);
    }

    /** A partition the checkpoint has no offset for (added since) is read from its start. */
    @Test
    void readsAPartitionWithoutAnOffsetFromItsStart() throws Exception {
        String topic = OutputTopics.create(kafka.bootstrapServers(), "read-back-unknown", 2);
        publish(topic, 8);

        Map<TopicPartition, Long> readFrom = new HashMap<>();
        readFrom.put(new TopicPartition(topic, 0), 4L);
        PublishedOutput published = read(topic, readFrom);

        assertThat(published.records())
                .as("partition 1 whole, nothing of partition 0")
                .isEqualTo(4);
    }

    private static PublishedOutput read(String topic, Map<TopicPartition, Long> readFrom) {
        Properties producer = new Properties();
        producer.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        return ReadBack.read(
                ReadBack.consumerConfig(producer), List.of(topic), WRITER, 0, readFrom);
    }

    /** {@code count} records of the writer at positions 0, 1, ..., to partitions 0, 1, 0, ... */
    private static List<RecordMetadata> publish(String topic, int count) throws Exception {
        Properties props = new Properties();
        props.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        props.setProperty(
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.setProperty(
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        List<RecordMetadata> written = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            for (int position = 0; position < count; position++) {
                ProducerRecord<byte[], byte[]> record =
                        new ProducerRecord<>(
                                topic,
                                position % 2,
                                null,
                                ("r" + position).getBytes(StandardCharsets.UTF_8));
                record.headers()
                        .add(OutputHeaders.POSITION, OutputHeaders.position(WRITER, position));
                written.add(producer.send(record).get());
            }
        }
        return written;
    }
}
