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

import io.clonos.runtime.causal.CorruptCausalLogException;
import io.clonos.runtime.causal.SharedDelta;
import io.clonos.runtime.network.DeltaLists;

import org.apache.flink.annotation.Internal;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Reads back, for a recovering writer, what its predecessors published after the checkpoint it
 * restores: every partition of its topics from the checkpoint's offsets (from the earliest offset
 * where the checkpoint has none: a partition added since, or no checkpoint yet) to the end offsets
 * at the start of the read. A predecessor is dead by then (the task was restarted after it ended),
 * so those end offsets are final for its records.
 */
@Internal
final class ReadBack {

    private static final Logger LOG = LoggerFactory.getLogger(ReadBack.class);

    private static final Duration POLL = Duration.ofMillis(200);

    private ReadBack() {}

    /** The producer's client settings that a consumer of the same cluster needs. */
    static Properties consumerConfig(Properties producerConfig) {
        Properties consumer = new Properties();
        for (String key : producerConfig.stringPropertyNames()) {
            if (ConsumerConfig.configNames().contains(key)
                    && !key.equals(ConsumerConfig.CLIENT_ID_CONFIG)) {
                consumer.setProperty(key, producerConfig.getProperty(key));
            }
        }
        consumer.setProperty(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        // the sink's own records are not transactional; another writer's open transaction must
        // not hold them back
        consumer.setProperty(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        consumer.setProperty(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // everything the read-back reads is in the log already: a fetch that finds a partition
        // at its end need not wait at the broker for more (500 ms by default), on the restore's
        // critical path
        consumer.setProperty(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
        consumer.setProperty(
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName());
        consumer.setProperty(
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName());
        consumer.remove(ConsumerConfig.GROUP_ID_CONFIG);
        return consumer;
    }

    /** The end offsets of every partition of {@code topics} now. */
    static Map<TopicPartition, Long> endOffsets(
            Properties consumerConfig, Collection<String> topics) {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerConfig)) {
            return consumer.endOffsets(partitions(consumer, topics));
        }
    }

    /**
     * The records of {@code writerId} at or after position {@code from}, and the determinants they
     * carry. Determinant headers that cannot be decoded make the determinants unusable ({@link
     * PublishedOutput#whyNoDeterminants}); the positions are still read.
     */
    static PublishedOutput read(
            Properties consumerConfig,
            Collection<String> topics,
            byte[] writerId,
            long from,
            Map<TopicPartition, Long> readFrom) {
        long started = System.nanoTime();
        long[] positions = new long[1024];
        long[] digests = new long[1024];
        int found = 0;
        long scanned = 0;
        List<SharedDelta> determinants = new ArrayList<>();
        String corrupt = null;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerConfig)) {
            List<TopicPartition> partitions = partitions(consumer, topics);
            consumer.assign(partitions);
            Map<TopicPartition, Long> end = new HashMap<>(consumer.endOffsets(partitions));
            List<TopicPartition> unknown = new ArrayList<>();
            for (TopicPartition partition : partitions) {
                Long offset = readFrom.get(partition);
                if (offset == null) {
                    unknown.add(partition);
                } else {
                    consumer.seek(partition, offset);
                }
            }
            if (!unknown.isEmpty()) {
                // an empty collection would seek every assigned partition to its beginning
                consumer.seekToBeginning(unknown);
            }
            end.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
            while (!end.isEmpty()) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                    scanned++;
                    long position = OutputHeaders.positionOf(record.headers(), writerId);
                    if (position < from) {
                        continue;
                    }
                    if (found == positions.length) {
                        positions = Arrays.copyOf(positions, found * 2);
                        digests = Arrays.copyOf(digests, found * 2);
                    }
                    positions[found] = position;
                    digests[found] =
                            PublishedOutput.digest(record.topic(), record.key(), record.value());
                    found++;
                    byte[] carried = OutputHeaders.determinantsOf(record.headers());
                    if (carried != null && corrupt == null) {
                        try {
                            determinants.addAll(DeltaLists.fromBytes(carried));
                        } catch (CorruptCausalLogException e) {
                            corrupt =
                                    "the determinants of the record at offset "
                                            + record.offset()
                                            + " of "
                                            + record.topic()
                                            + "-"
                                            + record.partition()
                                            + " cannot be read: "
                                            + e.getMessage();
                        }
                    }
                }
                end.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
            }
        }
        LOG.info(
                "Read back {} records of the writer's predecessors from position {} ({} records scanned, {} shared deltas) in {} ms.",
                found,
                from,
                scanned,
                determinants.size(),
                Duration.ofNanos(System.nanoTime() - started).toMillis());
        // a carrier holds what was not durable when it was sent; carriers of one publication go
        // to several partitions and are read back in any order: merged in log order, they are
        // contiguous
        determinants.sort(
                Comparator.comparing((SharedDelta shared) -> shared.delta().log().toString())
                        .thenComparingLong(shared -> shared.delta().epoch())
                        .thenComparingLong(shared -> shared.delta().offset()));
        return new PublishedOutput(
                Arrays.copyOf(positions, found),
                Arrays.copyOf(digests, found),
                corrupt == null ? determinants : List.of(),
                corrupt);
    }

    private static List<TopicPartition> partitions(
            KafkaConsumer<byte[], byte[]> consumer, Collection<String> topics) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (String topic : topics) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic);
            if (infos == null || infos.isEmpty()) {
                throw new IllegalStateException(
                        "Topic '" + topic + "' of the Clonos Kafka sink does not exist");
            }
            for (PartitionInfo info : infos) {
                partitions.add(new TopicPartition(topic, info.partition()));
            }
        }
        return partitions;
    }
}
