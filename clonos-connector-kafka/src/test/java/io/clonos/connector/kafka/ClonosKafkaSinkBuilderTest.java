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

import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The builder refuses what the sink cannot honour, naming the setting and what is allowed. */
class ClonosKafkaSinkBuilderTest {

    private static ClonosKafkaSinkBuilder<String> complete() {
        return ClonosKafkaSink.<String>builder()
                .setBootstrapServers("localhost:9092")
                .setTopics("out")
                .setRecordSerializer(
                        KafkaRecordSerializationSchema.<String>builder()
                                .setTopic("out")
                                .setValueSerializationSchema(new SimpleStringSchema())
                                .build());
    }

    @Test
    void aCompleteSinkPublishesIdempotentlyWithEveryReplica() {
        ClonosKafkaSink<String> sink = complete().setProperty("acks", "-1").build();
        assertThat(sink.producerConfig().getProperty("enable.idempotence")).isEqualTo("true");
        assertThat(sink.producerConfig().getProperty("acks")).isEqualTo("all");
        assertThat(sink.topics()).containsExactly("out");
        assertThat(sink.publishInterval())
                .isEqualTo(ClonosKafkaSinkBuilder.DEFAULT_PUBLISH_INTERVAL);
    }

    @Test
    void producerSettingsThatBreakTheGuaranteeAreRefused() {
        assertThatThrownBy(() -> complete().setProperty("transactional.id", "t").build())
                .hasMessageContaining("transactional.id=t")
                .hasMessageContaining("without transactions");
        assertThatThrownBy(() -> complete().setProperty("acks", "1").build())
                .hasMessageContaining("acks=1")
                .hasMessageContaining("all (or -1)");
        assertThatThrownBy(() -> complete().setProperty("enable.idempotence", "false").build())
                .hasMessageContaining("enable.idempotence=false");
        assertThatThrownBy(
                        () ->
                                complete()
                                        .setProperty("max.in.flight.requests.per.connection", "6")
                                        .build())
                .hasMessageContaining("max.in.flight.requests.per.connection=6")
                .hasMessageContaining("1 to 5");
    }

    @Test
    void whatTheSinkNeedsIsRequired() {
        assertThatThrownBy(() -> complete().setTopics().build()).hasMessageContaining("setTopics");
        assertThatThrownBy(
                        () ->
                                ClonosKafkaSink.<String>builder()
                                        .setBootstrapServers("localhost:9092")
                                        .setTopics("out")
                                        .build())
                .hasMessageContaining("record serializer");
        assertThatThrownBy(() -> complete().setPublishInterval(Duration.ZERO))
                .hasMessageContaining("must be positive");
        assertThatThrownBy(() -> complete().setMaxUndurableDeterminantBytes(10))
                .hasMessageContaining("at least 1024");
    }
}
