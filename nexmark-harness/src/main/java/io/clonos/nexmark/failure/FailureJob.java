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
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.lineage.DefaultKafkaDatasetFacet;
import org.apache.flink.connector.kafka.lineage.DefaultKafkaDatasetIdentifier;
import org.apache.flink.connector.kafka.lineage.KafkaDatasetFacet;
import org.apache.flink.connector.kafka.lineage.KafkaDatasetFacetProvider;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Nexmark Q3 and Q8, and the paper's synthetic job ({@link SyntheticStages}), as Flink jobs between
 * Kafka topics, for the failure experiment: a Kafka source (partitions spread over its subtasks; it
 * ends at the offsets the input ends at), the query, and Flink's transactional Kafka sink (exactly
 * once: a consumer that reads committed records sees each result once). The queries are Beam
 * Nexmark's: Q3, local item suggestion, joins new persons in Oregon, Idaho and California with the
 * auctions of category 10 they open (name, city, state, auction id); Q8, monitor new users, joins
 * the persons with the auctions they open in the same tumbling event-time window (person id, name,
 * auction reserve). Each output record carries the event time it answers (Q3: the later of the two
 * events; Q8: the window's end) in its {@value #EVENT_TIME_HEADER} header (the synthetic job's: its
 * event's time), from which the experiment computes end-to-end latency.
 */
@Internal
public final class FailureJob {

    /** Output header: the event time (8 bytes, big-endian millis) the result answers. */
    public static final String EVENT_TIME_HEADER = "nexmark-event-time";

    /** Q3's persons' states and auctions' category, as in Beam's Nexmark. */
    private static final Set<String> Q3_STATES = Set.of("OR", "ID", "CA");

    private static final long Q3_CATEGORY = 10;

    private FailureJob() {}

    /**
     * What one run of the job reads and writes; {@code guarantee} is the sink's (the failure-free
     * reference run needs no transactions).
     */
    public record Topics(
            String bootstrapServers,
            String input,
            Map<Integer, Long> inputEnd,
            String output,
            String transactionalIdPrefix,
            DeliveryGuarantee guarantee) {}

    /**
     * A class of each jar the job needs that a cluster's {@code lib/} lacks: this harness, Flink's
     * Kafka connector and Kafka's client; a cluster of separate processes gets them with the job.
     */
    public static final List<Class<?>> USER_CLASSES =
            List.of(FailureJob.class, KafkaSource.class, ProducerRecord.class);

    /**
     * The job of {@code settings.query} between the topics, at the settings' parallelism,
     * checkpoint interval, Q8 window and synthetic state.
     */
    public static JobGraph build(FailureSettings settings, Topics topics) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(settings.parallelism);
        env.enableCheckpointing(settings.checkpointIntervalMs);

        Map<TopicPartition, Long> end = new HashMap<>();
        topics.inputEnd()
                .forEach(
                        (partition, offset) ->
                                end.put(new TopicPartition(topics.input(), partition), offset));
        KafkaSource<String> source =
                KafkaSource.<String>builder()
                        .setBootstrapServers(topics.bootstrapServers())
                        .setTopics(topics.input())
                        .setGroupId(topics.transactionalIdPrefix())
                        .setStartingOffsets(OffsetsInitializer.earliest())
                        .setBounded(OffsetsInitializer.offsets(end))
                        .setValueOnlyDeserializer(new SimpleStringSchema())
                        .setProperty("commit.offsets.on.checkpoint", "false")
                        .build();
        // the record timestamps are the events' times, in order within each partition
        DataStream<String> lines =
                env.fromSource(
                        source,
                        WatermarkStrategy.<String>forMonotonousTimestamps(),
                        "nexmark-events");
        DataStream<String> results =
                settings.query == FailureQuery.SYNTHETIC
                        ? SyntheticStages.results(
                                lines,
                                settings.parallelism,
                                SyntheticStages.stateBytesPerKey(settings.syntheticStateMb))
                        : query(settings.query, lines, settings.windowSeconds);
        results.sinkTo(
                        KafkaSink.<String>builder()
                                .setBootstrapServers(topics.bootstrapServers())
                                .setRecordSerializer(new ResultRecords(topics.output()))
                                .setDeliveryGuarantee(topics.guarantee())
                                .setTransactionalIdPrefix(topics.transactionalIdPrefix())
                                // at most the broker's transaction.max.timeout.ms (15 minutes by
                                // default)
                                .setProperty(
                                        ProducerConfig.TRANSACTION_TIMEOUT_CONFIG,
                                        String.valueOf(Duration.ofMinutes(10).toMillis()))
                                .build())
                .name("results");
        return env.getStreamGraph().getJobGraph();
    }

    /** Q3 or Q8 over the input's lines; {@code windowSeconds} is Q8's window. */
    private static DataStream<String> query(
            FailureQuery query, DataStream<String> lines, long windowSeconds) {
        DataStream<NexmarkEvent> events =
                lines.flatMap(
                                (FlatMapFunction<String, NexmarkEvent>)
                                        (line, out) -> {
                                            NexmarkEvent event = NexmarkEvent.parse(line);
                                            if (event != null) {
                                                out.collect(event);
                                            }
                                        })
                        .returns(NexmarkEvent.class)
                        .name("parse");
        DataStream<NexmarkEvent> persons =
                events.filter(e -> e.kind == NexmarkEvent.PERSON).name("persons");
        DataStream<NexmarkEvent> auctions =
                events.filter(e -> e.kind == NexmarkEvent.AUCTION).name("auctions");

        if (query == FailureQuery.Q3) {
            return persons.filter(p -> Q3_STATES.contains(p.state))
                    .name("q3-persons")
                    .connect(auctions.filter(a -> a.category == Q3_CATEGORY).name("q3-auctions"))
                    .keyBy(
                            (KeySelector<NexmarkEvent, Long>) p -> p.id,
                            (KeySelector<NexmarkEvent, Long>) a -> a.seller)
                    .process(new LocalItemSuggestion())
                    .name("q3-join");
        }
        return persons.union(auctions)
                .keyBy(e -> e.kind == NexmarkEvent.PERSON ? e.id : e.seller)
                .window(TumblingEventTimeWindows.of(Duration.ofSeconds(windowSeconds)))
                .process(new NewUsers())
                .name("q8-join");
    }

    /**
     * Q3's join: a person waits for their auctions and an auction for its seller; each match is
     * emitted once, when its second half arrives, whatever the order.
     */
    static final class LocalItemSuggestion
            extends KeyedCoProcessFunction<Long, NexmarkEvent, NexmarkEvent, String> {
        private transient ValueState<NexmarkEvent> person;
        private transient ListState<NexmarkEvent> waitingAuctions;

        @Override
        public void open(Configuration parameters) {
            person =
                    getRuntimeContext()
                            .getState(new ValueStateDescriptor<>("person", NexmarkEvent.class));
            waitingAuctions =
                    getRuntimeContext()
                            .getListState(
                                    new ListStateDescriptor<>(
                                            "waiting-auctions", NexmarkEvent.class));
        }

        @Override
        public void processElement1(NexmarkEvent p, Context context, Collector<String> out)
                throws Exception {
            person.update(p);
            for (NexmarkEvent a : waitingAuctions.get()) {
                out.collect(result(p, a));
            }
            waitingAuctions.clear();
        }

        @Override
        public void processElement2(NexmarkEvent a, Context context, Collector<String> out)
                throws Exception {
            NexmarkEvent p = person.value();
            if (p == null) {
                waitingAuctions.add(a);
            } else {
                out.collect(result(p, a));
            }
        }

        private static String result(NexmarkEvent p, NexmarkEvent a) {
            return p.name + "," + p.city + "," + p.state + "," + a.id;
        }
    }

    /**
     * Q8's join within a window, keyed by person: for each person who joined in the window and each
     * auction they opened in it, the person's id and name and the auction's reserve.
     */
    static final class NewUsers
            extends ProcessWindowFunction<NexmarkEvent, String, Long, TimeWindow> {
        @Override
        public void process(
                Long person,
                Context context,
                Iterable<NexmarkEvent> events,
                Collector<String> out) {
            List<NexmarkEvent> persons = new ArrayList<>();
            List<NexmarkEvent> auctions = new ArrayList<>();
            events.forEach(e -> (e.kind == NexmarkEvent.PERSON ? persons : auctions).add(e));
            for (NexmarkEvent p : persons) {
                for (NexmarkEvent a : auctions) {
                    out.collect(p.id + "," + p.name + "," + a.reserve);
                }
            }
        }
    }

    /**
     * A result as an output record: the value is the result's text, the header its event time (the
     * element's timestamp), the partition the sink subtask's own.
     */
    static final class ResultRecords
            implements KafkaRecordSerializationSchema<String>, KafkaDatasetFacetProvider {
        private final String topic;
        private transient int partition;

        ResultRecords(String topic) {
            this.topic = topic;
        }

        /**
         * Names the topic, as the serializers of Flink's builder do: the Clonos Kafka sink serves
         * the job's exactly-once sink only when it knows the topics to read back.
         */
        @Override
        public Optional<KafkaDatasetFacet> getKafkaDatasetFacet() {
            return Optional.of(
                    new DefaultKafkaDatasetFacet(
                            DefaultKafkaDatasetIdentifier.ofTopics(List.of(topic))));
        }

        @Override
        public void open(
                SerializationSchema.InitializationContext context, KafkaSinkContext sinkContext) {
            int[] partitions = sinkContext.getPartitionsForTopic(topic);
            partition = partitions[sinkContext.getParallelInstanceId() % partitions.length];
        }

        @Override
        public ProducerRecord<byte[], byte[]> serialize(
                String result, KafkaSinkContext context, Long timestamp) {
            ProducerRecord<byte[], byte[]> record =
                    new ProducerRecord<>(
                            topic, partition, null, null, result.getBytes(StandardCharsets.UTF_8));
            record.headers()
                    .add(
                            EVENT_TIME_HEADER,
                            ByteBuffer.allocate(Long.BYTES)
                                    .putLong(timestamp == null ? Long.MIN_VALUE : timestamp)
                                    .array());
            return record;
        }
    }
}
