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

import io.clonos.bench.stats.LatencyHistogram;

import org.apache.flink.annotation.Internal;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Properties;

/**
 * A {@code read_committed} consumer of the benchmark's output topic, on a thread of its own: for
 * each record the time from its event time (when the job emitted it) to when the consumer sees it,
 * and which ids it saw, once or more often.
 */
@Internal
final class VisibleRecords implements AutoCloseable {

    private final KafkaConsumer<String, String> consumer;
    private final long expected;
    private final long warmUpMillis;
    private long firstEmitted = -1;
    private final LatencyHistogram latencies = new LatencyHistogram();
    private final BitSet seen = new BitSet();
    private final Thread thread;
    private volatile boolean stopped;
    private long duplicated;
    private long count;
    private long firstMillis = -1;
    private long lastMillis = -1;
    private volatile Throwable failure;

    /**
     * Reads {@code topic} from its start; latencies of records emitted within {@code warmUpMillis}
     * of the first record it sees are not recorded (the job's start-up: its first records wait for
     * the sink's first metadata and the compiler).
     */
    VisibleRecords(String bootstrapServers, String topic, long expected, long warmUpMillis) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "5");
        this.consumer = new KafkaConsumer<>(props);
        List<TopicPartition> partitions = new ArrayList<>();
        for (PartitionInfo info : consumer.partitionsFor(topic)) {
            partitions.add(new TopicPartition(topic, info.partition()));
        }
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        this.expected = expected;
        this.warmUpMillis = warmUpMillis;
        this.thread = new Thread(this::read, "visible-records-" + topic);
        thread.setDaemon(true);
        thread.start();
    }

    private void read() {
        try {
            while (!stopped) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(50))) {
                    long now = System.currentTimeMillis();
                    String line = record.value();
                    int comma = line.indexOf(',');
                    int id = Integer.parseInt(line.substring(0, comma));
                    long emitted =
                            Long.parseLong(line.substring(comma + 1, line.indexOf(',', comma + 1)));
                    synchronized (this) {
                        if (seen.get(id)) {
                            duplicated++;
                            continue;
                        }
                        seen.set(id);
                        count++;
                        if (firstEmitted < 0) {
                            firstEmitted = emitted;
                        }
                        if (emitted >= firstEmitted + warmUpMillis) {
                            latencies.record(now - emitted);
                        }
                        firstMillis = firstMillis < 0 ? emitted : Math.min(firstMillis, emitted);
                        lastMillis = now;
                    }
                }
            }
        } catch (org.apache.kafka.common.errors.WakeupException e) {
            // closed
        } catch (Throwable t) {
            failure = t;
        }
    }

    /** Waits until every expected record was seen, or {@code timeout} passed. */
    void awaitAll(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline && failure == null) {
            synchronized (this) {
                if (count >= expected) {
                    return;
                }
            }
            Thread.sleep(20);
        }
    }

    synchronized LatencyHistogram latencies() {
        return latencies;
    }

    synchronized long lost() {
        return expected - count;
    }

    synchronized long duplicated() {
        return duplicated;
    }

    /**
     * Records per second from the emission of the first record seen to the last record becoming
     * visible: what the job delivered to consumers, including the wait at the end (a sink that
     * commits at checkpoints makes its records visible in bursts, and a rate between the first and
     * the last visible record would overstate it).
     */
    synchronized double recordsPerSecond() {
        return lastMillis > firstMillis ? count * 1000.0 / (lastMillis - firstMillis) : 0;
    }

    @Override
    public void close() throws Exception {
        stopped = true;
        consumer.wakeup();
        thread.join(5_000);
        consumer.close();
        if (failure != null) {
            throw new IllegalStateException("The consumer of the output failed", failure);
        }
    }
}
