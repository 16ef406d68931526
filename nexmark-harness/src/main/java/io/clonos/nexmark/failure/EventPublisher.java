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

import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.nexmark.NexmarkConfiguration;
import org.apache.beam.sdk.nexmark.NexmarkUtils;
import org.apache.beam.sdk.nexmark.model.Event;
import org.apache.beam.sdk.nexmark.sources.generator.Generator;
import org.apache.beam.sdk.nexmark.sources.generator.GeneratorConfig;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The failure experiment's rate-limited generator: Beam Nexmark's event generator, with a fixed
 * base time so that every run publishes the same events, written to the input topic at the
 * generator's pace (event {@code i} at the start plus its offset from the base time). Event {@code
 * i} goes to partition {@code i mod partitions}, so where the input ends is known before it is
 * written. The record's timestamp is the event's time, which therefore maps to the wall-clock time
 * it was due to be sent: the reference of end-to-end latency.
 */
@Internal
public final class EventPublisher implements AutoCloseable {

    /** The generator's base time (2026-01-01T00:00:00Z): the event time of the first event. */
    public static final long BASE_TIME = 1_767_225_600_000L;

    private final String bootstrapServers;
    private final String topic;
    private final int partitions;
    private final long events;
    private final int rate;
    private final boolean paced;
    private final Encoding encoding;
    private final EventSizes sizes;
    private final AtomicLong published = new AtomicLong();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile long startMillis;
    private volatile boolean closed;
    private Thread thread;

    /** How an event is written: what the job that reads the topic decodes. */
    public enum Encoding {
        /** A text line, as {@link NexmarkEvent#parse} reads it (the failure experiment's job). */
        LINES {
            @Override
            byte[] encode(Event event) {
                return GeneratorEvents.line(event).getBytes(StandardCharsets.UTF_8);
            }
        },
        /** Beam's own coder of Nexmark events, {@code Event.CODER} (Beam pipelines). */
        BEAM_CODER {
            @Override
            byte[] encode(Event event) {
                try {
                    return CoderUtils.encodeToByteArray(Event.CODER, event);
                } catch (CoderException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };

        abstract byte[] encode(Event event);
    }

    /**
     * The average sizes of persons and auctions in bytes (Nexmark's {@code avgPersonByteSize} and
     * {@code avgAuctionByteSize}): the generator pads each event's {@code extra} to about them.
     */
    public record EventSizes(int personBytes, int auctionBytes) {
        /** Nexmark's defaults. */
        public static final EventSizes NEXMARK =
                new EventSizes(
                        NexmarkConfiguration.DEFAULT.avgPersonByteSize,
                        NexmarkConfiguration.DEFAULT.avgAuctionByteSize);
    }

    /** With {@code paced} false, the same events are written as fast as the broker takes them. */
    public EventPublisher(
            String bootstrapServers,
            String topic,
            int partitions,
            long events,
            int rate,
            boolean paced,
            Encoding encoding,
            EventSizes sizes) {
        this.sizes = sizes;
        this.bootstrapServers = bootstrapServers;
        this.topic = topic;
        this.partitions = partitions;
        this.events = events;
        this.rate = rate;
        this.paced = paced;
        this.encoding = encoding;
    }

    /** Where each partition of a topic of {@code events} events ends. */
    public static Map<Integer, Long> endOffsets(long events, int partitions) {
        Map<Integer, Long> end = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            end.put(p, events / partitions + (p < events % partitions ? 1 : 0));
        }
        return end;
    }

    /**
     * Beam's Nexmark configuration of the experiment: {@code events} events at {@code rate} per
     * second, in event-time order, of Nexmark's default sizes.
     */
    public static NexmarkConfiguration configuration(long events, int rate) {
        return configuration(events, rate, EventSizes.NEXMARK);
    }

    /** The same, with persons and auctions of {@code sizes}. */
    public static NexmarkConfiguration configuration(long events, int rate, EventSizes sizes) {
        NexmarkConfiguration config = NexmarkConfiguration.DEFAULT.copy();
        config.avgPersonByteSize = sizes.personBytes();
        config.avgAuctionByteSize = sizes.auctionBytes();
        config.numEvents = events;
        config.numEventGenerators = 1;
        config.rateShape = NexmarkUtils.RateShape.SQUARE;
        config.rateUnit = NexmarkUtils.RateUnit.PER_SECOND;
        config.firstEventRate = rate;
        config.nextEventRate = rate;
        // no delayed events: each partition is in event-time order, so no result depends on
        // lateness
        config.probDelayedEvent = 0;
        config.outOfOrderGroupSize = 1;
        return config;
    }

    /** Starts publishing on a thread of its own. */
    public void start() {
        startMillis = System.currentTimeMillis();
        thread = new Thread(this::publish, "nexmark-publisher-" + topic);
        thread.setDaemon(true);
        thread.start();
    }

    /** The wall-clock time the event of time {@code eventTime} was due to be published. */
    public long dueAt(long eventTime) {
        return startMillis + (eventTime - BASE_TIME);
    }

    public long startMillis() {
        return startMillis;
    }

    public long published() {
        return published.get();
    }

    /** Waits until every event is published; rethrows what stopped the publisher. */
    public void await() throws Exception {
        thread.join();
        Throwable t = failure.get();
        if (t != null) {
            throw new IllegalStateException(
                    "Publishing the Nexmark events to " + topic + " failed", t);
        }
    }

    private void publish() {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 2);
        // one request at a time: unpaced, the in-process broker rejected reordered idempotent
        // batches
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        Generator generator =
                new Generator(
                        new GeneratorConfig(
                                configuration(events, rate, sizes), BASE_TIME, 1, events, 0));
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            for (long i = 0; generator.hasNext() && !closed; i++) {
                Generator.NextEvent next = generator.nextEvent();
                long wait = dueAt(next.eventTimestamp) - System.currentTimeMillis();
                if (paced && wait > 0) {
                    Thread.sleep(wait);
                }
                producer.send(
                        new ProducerRecord<>(
                                topic,
                                (int) (i % partitions),
                                next.eventTimestamp,
                                null,
                                encoding.encode(next.event)),
                        (metadata, e) -> {
                            if (e != null) {
                                failure.compareAndSet(null, e);
                            }
                        });
                published.incrementAndGet();
            }
            producer.flush();
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        if (thread != null) {
            thread.join();
        }
    }
}
