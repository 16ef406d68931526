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
import io.clonos.runtime.jobgraph.VertexReplay;
import io.clonos.streaming.jobgraph.StreamTaskRewriter;
import io.clonos.streaming.sink.SinkSubstitute;

import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.sink.KafkaSinkBuilder;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.runtime.operators.sink.SinkWriterOperatorFactory;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which of a job's Flink {@code KafkaSink}s the rewriting at submission serves by the Clonos Kafka
 * sink under {@code clonos.kafka-sink.exactly-once}, and why it keeps the others.
 */
class KafkaSinkSubstitutionTest {

    private static final String TOPIC = "results";

    @Test
    void anExactlyOnceSinkIsServedByTheClonosSinkWhenTheKeySaysClonos() {
        JobVertex vertex =
                rewrittenSinkVertex(exactlyOnce().setProperty("linger.ms", "7"), "clonos");

        Sink<?> sink = sinkOf(vertex);
        assertThat(sink).isInstanceOf(ClonosKafkaSink.class);
        ClonosKafkaSink<?> clonos = (ClonosKafkaSink<?>) sink;
        assertThat(clonos.topics()).containsExactly(TOPIC);
        assertThat(clonos.producerConfig())
                .containsEntry("linger.ms", "7")
                .containsEntry("bootstrap.servers", "kafka:9092")
                .doesNotContainKey("transaction.timeout.ms")
                .doesNotContainKey("transactional.id");
        assertThat(VertexReplay.determinantsHeldBySink(vertex.getConfiguration()))
                .as("the sink's vertex is marked as holding its determinants in Kafka")
                .isTrue();
    }

    @Test
    void flinksTwoPhaseCommitStaysByDefault() {
        JobVertex vertex = rewrittenSinkVertex(exactlyOnce(), null);

        assertThat(sinkOf(vertex)).isInstanceOf(KafkaSink.class);
        assertThat(VertexReplay.determinantsHeldBySink(vertex.getConfiguration())).isFalse();
    }

    @Test
    void withoutCausalLoggingTheSinkIsKept() {
        JobVertex vertex =
                rewrittenSinkVertex(
                        exactlyOnce(), "clonos", Map.of("clonos.determinant-sharing-depth", "0"));

        assertThat(sinkOf(vertex)).isInstanceOf(KafkaSink.class);
    }

    @Test
    void aWeakerGuaranteeIsKeptWithItsReason() {
        SinkSubstitute answer =
                substitute(
                        KafkaSink.<String>builder()
                                .setBootstrapServers("kafka:9092")
                                .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
                                .setRecordSerializer(serializer()));

        assertThat(answer.substitute()).isEmpty();
        assertThat(answer.whyKept()).get(STRING).contains("at-least-once");
    }

    @Test
    void aTopicChosenPerRecordByTheJobsOwnSelectorIsKept() {
        SinkSubstitute answer =
                substitute(
                        exactlyOnce()
                                .setRecordSerializer(
                                        KafkaRecordSerializationSchema.<String>builder()
                                                .setTopicSelector(
                                                        line -> "results-" + line.length())
                                                .setValueSerializationSchema(
                                                        new SimpleStringSchema())
                                                .build()));

        assertThat(answer.substitute()).isEmpty();
        assertThat(answer.whyKept()).get(STRING).contains("does not name the topics");
    }

    @Test
    void aProducerPropertyTheClonosSinkRefusesIsKeptWithItsReason() {
        SinkSubstitute answer = substitute(exactlyOnce().setProperty("acks", "1"));

        assertThat(answer.substitute()).isEmpty();
        assertThat(answer.whyKept()).get(STRING).contains("acks=1");
    }

    @Test
    void onlyFlinksKafkaSinkIsAnswered() {
        ClonosConfiguration clonos = settings("clonos", Map.of());
        Sink<String> clonosSink =
                ClonosKafkaSink.<String>builder()
                        .setBootstrapServers("kafka:9092")
                        .setTopics(TOPIC)
                        .setRecordSerializer(serializer())
                        .build();

        assertThat(new KafkaSinkSubstitution().substituteFor(clonosSink, clonos)).isEmpty();
        assertThat(
                        new KafkaSinkSubstitution()
                                .substituteFor(exactlyOnce().build(), settings(null, Map.of())))
                .as("nothing to say while the key asks for two-phase commit")
                .isEmpty();
    }

    // ------------------------------------------------------------------------------------------

    private static final org.assertj.core.api.InstanceOfAssertFactory<
                    String, org.assertj.core.api.AbstractStringAssert<?>>
            STRING = org.assertj.core.api.InstanceOfAssertFactories.STRING;

    private static KafkaSinkBuilder<String> exactlyOnce() {
        return KafkaSink.<String>builder()
                .setBootstrapServers("kafka:9092")
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix("job")
                .setRecordSerializer(serializer());
    }

    private static KafkaRecordSerializationSchema<String> serializer() {
        return KafkaRecordSerializationSchema.<String>builder()
                .setTopic(TOPIC)
                .setValueSerializationSchema(new SimpleStringSchema())
                .build();
    }

    private static SinkSubstitute substitute(KafkaSinkBuilder<String> builder) {
        Optional<SinkSubstitute> answer =
                new KafkaSinkSubstitution()
                        .substituteFor(builder.build(), settings("clonos", Map.of()));
        assertThat(answer).as("Flink's Kafka sink is answered").isPresent();
        return answer.get();
    }

    private static ClonosConfiguration settings(String exactlyOnce, Map<String, String> more) {
        Configuration config = Configuration.fromMap(more);
        if (exactlyOnce != null) {
            config.setString("clonos.kafka-sink.exactly-once", exactlyOnce);
        }
        return ClonosConfiguration.fromConfiguration(config);
    }

    private static JobVertex rewrittenSinkVertex(
            KafkaSinkBuilder<String> sink, String exactlyOnce) {
        return rewrittenSinkVertex(sink, exactlyOnce, Map.of());
    }

    /** The vertex of the sink's writer, after the rewriting of a job numbers -> sink. */
    private static JobVertex rewrittenSinkVertex(
            KafkaSinkBuilder<String> sink, String exactlyOnce, Map<String, String> more) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(1000);
        env.fromSequence(0, 10).map(String::valueOf).sinkTo(sink.build()).name("out");
        JobGraph jobGraph = env.getStreamGraph().getJobGraph();
        new StreamTaskRewriter()
                .rewrite(
                        jobGraph,
                        settings(exactlyOnce, more),
                        KafkaSinkSubstitutionTest.class.getClassLoader());
        for (JobVertex vertex : jobGraph.getVertices()) {
            if (writerOf(vertex).isPresent()) {
                return vertex;
            }
        }
        throw new AssertionError("no vertex writes to the sink");
    }

    private static Sink<?> sinkOf(JobVertex vertex) {
        return writerOf(vertex).orElseThrow().getSink();
    }

    private static Optional<SinkWriterOperatorFactory<?, ?>> writerOf(JobVertex vertex) {
        ClassLoader loader = KafkaSinkSubstitutionTest.class.getClassLoader();
        StreamConfig head = new StreamConfig(vertex.getConfiguration());
        for (StreamConfig operator :
                head.getTransitiveChainedTaskConfigsWithSelf(loader).values()) {
            Class<?> factory = operator.getStreamOperatorFactoryClass(loader);
            if (factory != null && SinkWriterOperatorFactory.class.isAssignableFrom(factory)) {
                return Optional.of(operator.getStreamOperatorFactory(loader));
            }
        }
        return Optional.empty();
    }
}
