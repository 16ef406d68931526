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

import io.clonos.streaming.sink.DeterminantHoldingSink;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.SupportsWriterState;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.core.io.SimpleVersionedSerializer;

import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;

/**
 * A Kafka sink whose output is exactly once and visible at once, without transactions (section 5.5
 * of the Clonos paper): each record is published as soon as the determinants it depends on are in
 * Kafka beside it, and a recovered writer reads them back, replays to the same output and publishes
 * only what its predecessor had not. A {@code read_committed} consumer sees a record within about
 * the publish interval and the producer's round trip, whatever the checkpoint interval; {@code
 * read_committed} and {@code read_uncommitted} consumers see the same records.
 *
 * <p>Built like Flink's {@code KafkaSink}, with the topics it writes named ({@link
 * ClonosKafkaSinkBuilder}). Outside a Clonos cluster, or with causal logging off, it still
 * publishes at once and skips what a predecessor published at the same position with the same
 * contents, so a deterministic job's output stays exactly once; a job whose choices differ in the
 * restart then diverges ({@link DivergencePolicy}).
 *
 * @param <IN> the type of the records the sink writes
 */
@PublicEvolving
public final class ClonosKafkaSink<IN>
        implements Sink<IN>, SupportsWriterState<IN, WriterCheckpoint>, DeterminantHoldingSink {

    private static final long serialVersionUID = 1L;

    private final Properties producerConfig;
    private final KafkaRecordSerializationSchema<IN> serializer;
    private final List<String> topics;
    private final Duration publishInterval;
    private final DivergencePolicy divergencePolicy;
    private final long maxUndurableDeterminantBytes;

    ClonosKafkaSink(
            Properties producerConfig,
            KafkaRecordSerializationSchema<IN> serializer,
            List<String> topics,
            Duration publishInterval,
            DivergencePolicy divergencePolicy,
            long maxUndurableDeterminantBytes) {
        this.producerConfig = producerConfig;
        this.serializer = serializer;
        this.topics = List.copyOf(topics);
        this.publishInterval = publishInterval;
        this.divergencePolicy = divergencePolicy;
        this.maxUndurableDeterminantBytes = maxUndurableDeterminantBytes;
    }

    public static <IN> ClonosKafkaSinkBuilder<IN> builder() {
        return new ClonosKafkaSinkBuilder<>();
    }

    /** Flink 1.20 calls {@link #createWriter(WriterInitContext)}; this older form is refused. */
    @Override
    @Deprecated
    public SinkWriter<IN> createWriter(InitContext context) {
        throw new UnsupportedOperationException(
                "The Clonos Kafka sink needs Flink's WriterInitContext (Flink 1.20 or later)");
    }

    @Override
    public StatefulSinkWriter<IN, WriterCheckpoint> createWriter(WriterInitContext context)
            throws IOException {
        return new ClonosKafkaWriter<>(this, context, List.of());
    }

    @Override
    public StatefulSinkWriter<IN, WriterCheckpoint> restoreWriter(
            WriterInitContext context, Collection<WriterCheckpoint> recoveredState)
            throws IOException {
        return new ClonosKafkaWriter<>(this, context, recoveredState);
    }

    @Override
    public SimpleVersionedSerializer<WriterCheckpoint> getWriterStateSerializer() {
        return new WriterCheckpoint.Serializer();
    }

    Properties producerConfig() {
        Properties copy = new Properties();
        copy.putAll(producerConfig);
        return copy;
    }

    KafkaRecordSerializationSchema<IN> serializer() {
        return serializer;
    }

    List<String> topics() {
        return topics;
    }

    Duration publishInterval() {
        return publishInterval;
    }

    DivergencePolicy divergencePolicy() {
        return divergencePolicy;
    }

    long maxUndurableDeterminantBytes() {
        return maxUndurableDeterminantBytes;
    }
}
