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

import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.configuration.ClonosOptions;
import io.clonos.runtime.configuration.ClonosOptions.KafkaSinkExactlyOnce;
import io.clonos.streaming.sink.SinkSubstitute;
import io.clonos.streaming.sink.SinkSubstitution;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.lineage.KafkaDatasetFacet;
import org.apache.flink.connector.kafka.lineage.KafkaDatasetFacetProvider;
import org.apache.flink.connector.kafka.lineage.KafkaDatasetIdentifier;
import org.apache.flink.connector.kafka.sink.ClonosKafkaSinkPatch;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;

import org.apache.kafka.clients.producer.ProducerConfig;

import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * Serves a Flink {@link KafkaSink} with {@link DeliveryGuarantee#EXACTLY_ONCE} by a {@link
 * ClonosKafkaSink} built from the same producer properties and record serializer, when {@code
 * clonos.kafka-sink.exactly-once} is {@code clonos}. The topics come from the serializer's own
 * account of them (Flink's lineage facet, which the serializers of {@code
 * KafkaRecordSerializationSchema.builder()} give for a topic or a list of topics). A sink whose
 * topics it cannot name, whose guarantee is weaker or whose producer properties the Clonos sink
 * refuses is kept, with the reason.
 */
@Internal
public final class KafkaSinkSubstitution implements SinkSubstitution {

    /**
     * Properties of Flink's transactional writer that mean nothing to a writer without
     * transactions; left out of the substitute's producer.
     */
    private static final List<String> TRANSACTION_PROPERTIES =
            List.of(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG);

    @Override
    public Optional<SinkSubstitute> substituteFor(Sink<?> sink, ClonosConfiguration job) {
        if (!(sink instanceof KafkaSink<?> kafka)
                || job.getKafkaSinkExactlyOnce() != KafkaSinkExactlyOnce.CLONOS) {
            return Optional.empty();
        }
        return Optional.of(substitute(kafka));
    }

    private static <IN> SinkSubstitute substitute(KafkaSink<IN> sink) {
        DeliveryGuarantee guarantee;
        KafkaRecordSerializationSchema<IN> serializer;
        Properties producerConfig;
        try {
            guarantee = ClonosKafkaSinkPatch.deliveryGuarantee(sink);
            serializer = ClonosKafkaSinkPatch.recordSerializer(sink);
            producerConfig = ClonosKafkaSinkPatch.producerConfig(sink);
        } catch (IllegalStateException | LinkageError e) {
            return SinkSubstitute.kept(
                    "its settings cannot be read from this version of Flink's Kafka connector ("
                            + e.getMessage()
                            + ")");
        }
        if (guarantee != DeliveryGuarantee.EXACTLY_ONCE) {
            return SinkSubstitute.kept(
                    "its delivery guarantee is "
                            + guarantee
                            + "; "
                            + ClonosOptions.KAFKA_SINK_EXACTLY_ONCE.key()
                            + " serves "
                            + DeliveryGuarantee.EXACTLY_ONCE
                            + " sinks only");
        }
        Optional<List<String>> topics = topicsOf(serializer);
        if (topics.isEmpty()) {
            return SinkSubstitute.kept(
                    "its record serializer ("
                            + serializer.getClass().getName()
                            + ") does not name the topics it writes to (a topic pattern, a topic"
                            + " selector of the job's own, or a serializer that is no"
                            + " KafkaDatasetFacetProvider), and a recovered Clonos writer must read"
                            + " back every topic its predecessor wrote");
        }
        TRANSACTION_PROPERTIES.forEach(producerConfig::remove);
        try {
            return SinkSubstitute.servedBy(
                    ClonosKafkaSink.<IN>builder()
                            .setKafkaProducerConfig(producerConfig)
                            .setRecordSerializer(serializer)
                            .setTopics(topics.get().toArray(new String[0]))
                            .build());
        } catch (IllegalArgumentException e) {
            return SinkSubstitute.kept(e.getMessage());
        }
    }

    /** The topics the serializer says it writes to, if it names them. */
    static Optional<List<String>> topicsOf(KafkaRecordSerializationSchema<?> serializer) {
        if (!(serializer instanceof KafkaDatasetFacetProvider provider)) {
            return Optional.empty();
        }
        Optional<KafkaDatasetFacet> facet = provider.getKafkaDatasetFacet();
        if (facet.isEmpty()) {
            return Optional.empty();
        }
        KafkaDatasetIdentifier identifier = facet.get().getTopicIdentifier();
        List<String> topics = identifier.getTopics();
        if (identifier.getTopicPattern() != null || topics == null || topics.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(List.copyOf(topics));
    }
}
