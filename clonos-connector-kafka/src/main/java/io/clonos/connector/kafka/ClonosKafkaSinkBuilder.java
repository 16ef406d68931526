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

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * Builds a {@link ClonosKafkaSink}, with the shape of Flink's {@code KafkaSinkBuilder}: bootstrap
 * servers, a record serializer and producer properties, plus the topics the serializer writes to (a
 * recovered writer reads them back) and the publish interval. No delivery guarantee to choose: the
 * sink is exactly once. Settings the sink cannot honour are refused when it is built.
 */
@PublicEvolving
public final class ClonosKafkaSinkBuilder<IN> {

    /** The default publish interval: the most a record waits in the writer before it is sent. */
    public static final Duration DEFAULT_PUBLISH_INTERVAL = Duration.ofMillis(2);

    /** The default bound on the determinants one carrier record holds. */
    public static final long DEFAULT_MAX_UNDURABLE_DETERMINANT_BYTES = 256 * 1024;

    private final Properties producerConfig = new Properties();
    private KafkaRecordSerializationSchema<IN> serializer;
    private final List<String> topics = new ArrayList<>();
    private Duration publishInterval = DEFAULT_PUBLISH_INTERVAL;
    private DivergencePolicy divergencePolicy = DivergencePolicy.PUBLISH_MARKED;
    private long maxUndurableDeterminantBytes = DEFAULT_MAX_UNDURABLE_DETERMINANT_BYTES;

    ClonosKafkaSinkBuilder() {}

    public ClonosKafkaSinkBuilder<IN> setBootstrapServers(String bootstrapServers) {
        return setProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    }

    public ClonosKafkaSinkBuilder<IN> setKafkaProducerConfig(Properties properties) {
        properties
                .stringPropertyNames()
                .forEach(key -> producerConfig.setProperty(key, properties.getProperty(key)));
        return this;
    }

    public ClonosKafkaSinkBuilder<IN> setProperty(String key, String value) {
        producerConfig.setProperty(key, value);
        return this;
    }

    public ClonosKafkaSinkBuilder<IN> setRecordSerializer(
            KafkaRecordSerializationSchema<IN> serializer) {
        this.serializer = serializer;
        return this;
    }

    /** The topics the record serializer writes to; a record for another topic fails the job. */
    public ClonosKafkaSinkBuilder<IN> setTopics(String... topics) {
        this.topics.clear();
        this.topics.addAll(List.of(topics));
        return this;
    }

    /**
     * The most a record waits in the writer before it is handed to the producer (default 2 ms);
     * records also go at once in publications of {@value ClonosKafkaWriter#MAX_PUBLICATION}, and at
     * every checkpoint. Each publication reads the task's new determinants once.
     */
    public ClonosKafkaSinkBuilder<IN> setPublishInterval(Duration publishInterval) {
        if (publishInterval.isNegative() || publishInterval.isZero()) {
            throw new IllegalArgumentException(
                    "The publish interval must be positive, not " + publishInterval);
        }
        this.publishInterval = publishInterval;
        return this;
    }

    /** What a restarted job does with a record that differs from its predecessor's. */
    public ClonosKafkaSinkBuilder<IN> setDivergencePolicy(DivergencePolicy policy) {
        this.divergencePolicy = policy;
        return this;
    }

    /**
     * When the determinants that no acknowledged record carries exceed this (default 256 KiB), the
     * writer waits for its carriers' acknowledgements before it goes on: a bound on the determinant
     * header of a record, within Kafka's {@code max.request.size}.
     */
    public ClonosKafkaSinkBuilder<IN> setMaxUndurableDeterminantBytes(long bytes) {
        if (bytes < 1024) {
            throw new IllegalArgumentException(
                    "The bound on undurable determinant bytes must be at least 1024, not " + bytes);
        }
        this.maxUndurableDeterminantBytes = bytes;
        return this;
    }

    public ClonosKafkaSink<IN> build() {
        if (serializer == null) {
            throw new IllegalArgumentException("The Clonos Kafka sink needs a record serializer");
        }
        if (topics.isEmpty()) {
            throw new IllegalArgumentException(
                    "The Clonos Kafka sink needs the topics its serializer writes to (setTopics)");
        }
        if (producerConfig.getProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG) == null) {
            throw new IllegalArgumentException(
                    "The Clonos Kafka sink needs bootstrap servers (setBootstrapServers)");
        }
        Properties config = new Properties();
        config.putAll(producerConfig);
        refuse(
                config,
                ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                null,
                "unset: the sink publishes without transactions");
        refuse(
                config,
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                "true",
                "true: the sink relies on Kafka keeping a partition's records in order and without gaps");
        refuse(
                config,
                ProducerConfig.ACKS_CONFIG,
                "all",
                "all (or -1): a record counts as published once every in-sync replica has it");
        String inFlight = config.getProperty(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION);
        if (inFlight != null && !(inFlight.matches("[1-5]"))) {
            throw new IllegalArgumentException(
                    "Kafka producer property "
                            + ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION
                            + "="
                            + inFlight
                            + " is not allowed by the Clonos Kafka sink: 1 to 5, within which the idempotent producer keeps order");
        }
        config.setProperty(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        config.setProperty(ProducerConfig.ACKS_CONFIG, "all");
        config.setProperty(
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        config.setProperty(
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return new ClonosKafkaSink<>(
                config,
                serializer,
                topics,
                publishInterval,
                divergencePolicy,
                maxUndurableDeterminantBytes);
    }

    /** Refuses {@code key} unless it is unset or {@code allowed} (null: only unset). */
    private static void refuse(Properties config, String key, String allowed, String what) {
        String value = config.getProperty(key);
        boolean fine =
                value == null
                        || (allowed != null
                                && (value.equalsIgnoreCase(allowed)
                                        || (allowed.equals("all") && value.equals("-1"))));
        if (!fine) {
            throw new IllegalArgumentException(
                    "Kafka producer property "
                            + key
                            + "="
                            + value
                            + " is not allowed by the Clonos Kafka sink: "
                            + what);
        }
    }
}
