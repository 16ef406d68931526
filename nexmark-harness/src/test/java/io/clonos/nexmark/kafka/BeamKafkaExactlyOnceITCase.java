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

package io.clonos.nexmark.kafka;

import io.clonos.kafka.broker.EmbeddedKafka;
import io.clonos.runtime.minicluster.EmbeddedClusters;
import io.clonos.runtime.minicluster.EmbeddedTaskManagers;

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.clusterframework.ApplicationStatus;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionJobVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.kafka.KafkaIO;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.LongSerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An unchanged Beam pipeline between Kafka topics on ClonosRunner: {@code KafkaIO.read()} of a
 * topic with four partitions per reader, a stateful step whose output depends on each key's order,
 * and {@code KafkaIO.write().withEOS(...)}. The TaskManager of the first reader is lost while
 * records flow. Only that TaskManager's subtasks restart (the readers' interleaving of their
 * partitions and the sink's shards are reproduced), and the committed output, read with {@code
 * read_committed}, holds every record's result exactly once: with the records' create times, and
 * with the processing time {@code KafkaIO} stamps by default.
 */
class BeamKafkaExactlyOnceITCase {

    private static final int PARTITIONS = 8;
    private static final int PARALLELISM = 2;
    private static final int KEYS = 16;

    /**
     * Few: Beam's exactly-once sink commits a Kafka transaction per record here (its trigger fires
     * per element), about ten a second per shard on this broker.
     */
    private static final int RECORDS = 400;

    private static final String INPUT = "numbers";
    private static final String OUTPUT = "chains";

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aLostTaskManagerIsRecoveredLocallyAndExactlyOnce() throws Exception {
        assertThat(loseTheFirstReadersTaskManager(false))
                .as("every record's chain link committed exactly once")
                .isEqualTo(expectedChains());
    }

    /**
     * The read as {@code KafkaIO} makes it, stamped with processing time, which ClonosRunner has
     * the task's causal clock stamp. Each result carries its record's time, and its key's chain
     * takes in the times as well as the values: a recovered reader whose records got other times
     * than its predecessor's would commit links that do not follow from the times committed before
     * them, or a key's results twice.
     */
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aLostTaskManagerUnderAProcessingTimeReadIsRecoveredLocallyAndExactlyOnce()
            throws Exception {
        long started = System.currentTimeMillis();
        Map<Long, List<String>> committed = loseTheFirstReadersTaskManager(true);
        assertThat(committed.keySet()).hasSize(KEYS);
        committed.forEach((key, links) -> assertChainOfTimes(key, links, started));
    }

    /**
     * Runs the pipeline, loses the first reader's TaskManager while records flow, checks that only
     * its subtasks restarted, and returns what was committed, per key in the chain's order.
     */
    private static Map<Long, List<String>> loseTheFirstReadersTaskManager(boolean processingTime)
            throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            createTopics(kafka.bootstrapServers());
            MiniCluster cluster =
                    EmbeddedClusters.start(true, EmbeddedClusters.killConfiguration(), 3, 2);
            try {
                JobID job = submit(cluster, kafka.bootstrapServers(), processingTime);
                CompletableFuture<Void> written =
                        CompletableFuture.runAsync(() -> produce(kafka.bootstrapServers()));

                // Beam's sink keeps a shard's writer id in its state from the shard's first commit
                // on, and refuses to go on from a checkpoint without it (on Flink as well): lose
                // the TaskManager once both shards committed and a checkpoint holds their ids
                awaitCommitted(kafka.bootstrapServers(), 40);
                BeamOnClonos.awaitCheckpoints(
                        cluster, job, BeamOnClonos.completedCheckpoints(cluster, job) + 2);
                AccessExecutionGraph running = cluster.getExecutionGraph(job).get();
                AccessExecutionJobVertex reader =
                        running.getVerticesTopologically().iterator().next();
                String victim = EmbeddedClusters.location(running, reader.getName(), 0);
                Set<String> lost = BeamOnClonos.subtasksOn(running, victim);
                cluster.terminateTaskManager(EmbeddedTaskManagers.indexOf(cluster, victim)).get();
                forgetBeamsSinkWriters();

                written.get(2, TimeUnit.MINUTES);
                awaitCommitted(kafka.bootstrapServers(), RECORDS);
                cluster.cancelJob(job).get();
                assertThat(
                                cluster.requestJobResult(job)
                                        .get(1, TimeUnit.MINUTES)
                                        .getApplicationStatus())
                        .isEqualTo(ApplicationStatus.CANCELED);

                assertThat(BeamOnClonos.restarted(cluster.getArchivedExecutionGraph(job).get()))
                        .as("only the lost TaskManager's subtasks restarted")
                        .isEqualTo(lost);
                return committedChains(kafka.bootstrapServers());
            } finally {
                cluster.close();
            }
        }
    }

    /**
     * What a lost TaskManager's process takes with it and an in-process one cannot: Beam's
     * exactly-once sink keeps its transactional producers in a JVM-wide cache and puts one back
     * after a cancelled write left it inside a transaction, where the next writer of its shard in
     * this JVM fails to begin one, again and again (Beam's own behaviour, on Flink as on Clonos). A
     * real TaskManager's death empties that cache; so does this. The surviving writers open new
     * producers, which fence the old ones, as Beam does after its cache expires them.
     */
    private static void forgetBeamsSinkWriters() throws ReflectiveOperationException {
        Class<?> writer =
                Class.forName(
                        "org.apache.beam.sdk.io.kafka.KafkaExactlyOnceSink$ExactlyOnceWriter");
        Field cache = writer.getDeclaredField("CACHE_BY_GROUP_ID");
        cache.setAccessible(true);
        Object loadingCache = cache.get(null);
        Class.forName("org.apache.beam.vendor.guava.v32_1_2_jre.com.google.common.cache.Cache")
                .getMethod("invalidateAll")
                .invoke(loadingCache);
    }

    private static JobID submit(MiniCluster cluster, String bootstrap, boolean processingTime)
            throws Exception {
        Pipeline pipeline = BeamOnClonos.pipeline(cluster, PARALLELISM);
        KafkaIO.Read<Long, Long> read =
                KafkaIO.<Long, Long>read()
                        .withBootstrapServers(bootstrap)
                        .withTopic(INPUT)
                        .withKeyDeserializer(LongDeserializer.class)
                        .withValueDeserializer(LongDeserializer.class)
                        .withConsumerConfigUpdates(
                                Map.of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"));
        pipeline.apply(
                        (processingTime ? read : read.withCreateTime(Duration.standardSeconds(1)))
                                .withoutMetadata())
                .apply(ParDo.of(new HashChain(processingTime)))
                .apply(
                        KafkaIO.<Long, String>write()
                                .withBootstrapServers(bootstrap)
                                .withTopic(OUTPUT)
                                .withKeySerializer(LongSerializer.class)
                                .withValueSerializer(StringSerializer.class)
                                // a group of its own per test: Beam caches its writers per
                                // group in the JVM, connected to the test's broker
                                .withEOS(
                                        2,
                                        processingTime
                                                ? "clonos-eos-sink-processing-time"
                                                : "clonos-eos-sink"));
        return BeamOnClonos.run(cluster, pipeline);
    }

    /**
     * Each key's values in the order they were written: its own partition keeps that order, so the
     * chain of a key does not depend on how a reader interleaves its partitions. With {@code
     * withTimes}, the chain takes in each record's timestamp as well, and each result carries it.
     */
    static final class HashChain extends DoFn<KV<Long, Long>, KV<Long, String>> {

        private final boolean withTimes;

        HashChain(boolean withTimes) {
            this.withTimes = withTimes;
        }

        @StateId("chain")
        private final StateSpec<ValueState<Long>> chainSpec = StateSpecs.value(VarLongCoder.of());

        @StateId("links")
        private final StateSpec<ValueState<Long>> linksSpec = StateSpecs.value(VarLongCoder.of());

        @ProcessElement
        public void process(
                @Element KV<Long, Long> record,
                @StateId("chain") ValueState<Long> chain,
                @StateId("links") ValueState<Long> links,
                @Timestamp Instant timestamp,
                OutputReceiver<KV<Long, String>> out) {
            long link = link(chain.read() == null ? 17 : chain.read(), record.getValue());
            if (withTimes) {
                link = link(link, timestamp.getMillis());
            }
            long count = (links.read() == null ? 0 : links.read()) + 1;
            chain.write(link);
            links.write(count);
            out.output(
                    KV.of(
                            record.getKey(),
                            count + ":" + link + (withTimes ? ":" + timestamp.getMillis() : "")));
        }
    }

    private static final java.util.Comparator<String> BY_LINK_NUMBER =
            java.util.Comparator.comparingLong(link -> Long.parseLong(link.split(":")[0]));

    static long link(long chain, long value) {
        return chain * 31 + value;
    }

    private static Map<Long, List<String>> expectedChains() {
        Map<Long, List<String>> chains = new TreeMap<>();
        Map<Long, Long> last = new HashMap<>();
        for (long i = 0; i < RECORDS; i++) {
            long key = i % KEYS;
            long link = link(last.getOrDefault(key, 17L), i);
            last.put(key, link);
            List<String> links = chains.computeIfAbsent(key, k -> new ArrayList<>());
            links.add((links.size() + 1) + ":" + link);
        }
        return chains;
    }

    /**
     * A key's results of the pipeline with times: one per record of the key, in order, each link
     * the chain of the key's values and of the times committed with it; each time the wall clock's
     * since the test started, not a time the reader left unset.
     */
    private static void assertChainOfTimes(long key, List<String> links, long started) {
        assertThat(links).as("results of key " + key).hasSize(RECORDS / KEYS);
        long chain = 17;
        for (int k = 0; k < links.size(); k++) {
            String[] result = links.get(k).split(":");
            long time = Long.parseLong(result[2]);
            assertThat(Long.parseLong(result[0])).as("link of key " + key).isEqualTo(k + 1);
            assertThat(time).as("time of " + links.get(k)).isGreaterThanOrEqualTo(started);
            chain = link(link(chain, key + (long) KEYS * k), time);
            assertThat(Long.parseLong(result[1]))
                    .as("link %d of key %d follows from the times before it: %s", k + 1, key, links)
                    .isEqualTo(chain);
        }
    }

    private static void createTopics(String bootstrap) throws Exception {
        try (Admin admin =
                Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(
                            List.of(
                                    new NewTopic(INPUT, PARTITIONS, (short) 1),
                                    new NewTopic(OUTPUT, 2, (short) 1)))
                    .all()
                    .get();
        }
    }

    /** Writes the records over some seconds, each key to a partition of its own. */
    private static void produce(String bootstrap) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<Long, Long> producer =
                new KafkaProducer<>(props, new LongSerializer(), new LongSerializer())) {
            for (long i = 0; i < RECORDS; i++) {
                long key = i % KEYS;
                producer.send(new ProducerRecord<>(INPUT, (int) (key % PARTITIONS), key, i)).get();
                // over some seconds: the readers still read when their TaskManager is lost
                Thread.sleep(20);
            }
        } catch (Exception e) {
            throw new IllegalStateException("Cannot write the input", e);
        }
    }

    private static KafkaConsumer<Long, String> committedReader(String bootstrap) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        KafkaConsumer<Long, String> consumer =
                new KafkaConsumer<>(props, new LongDeserializer(), new StringDeserializer());
        List<TopicPartition> partitions =
                List.of(new TopicPartition(OUTPUT, 0), new TopicPartition(OUTPUT, 1));
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        return consumer;
    }

    /** Waits until at least {@code records} results are committed. */
    private static void awaitCommitted(String bootstrap, int records) {
        try (KafkaConsumer<Long, String> consumer = committedReader(bootstrap)) {
            int seen = 0;
            while (seen < records) {
                seen += consumer.poll(java.time.Duration.ofMillis(500)).count();
            }
        }
    }

    /** Everything committed to the output, per key in the chain's order. */
    private static Map<Long, List<String>> committedChains(String bootstrap) {
        Map<Long, List<String>> chains = new TreeMap<>();
        try (KafkaConsumer<Long, String> consumer = committedReader(bootstrap)) {
            Map<TopicPartition, Long> end = consumer.endOffsets(consumer.assignment());
            while (end.entrySet().stream()
                    .anyMatch(e -> consumer.position(e.getKey()) < e.getValue())) {
                for (ConsumerRecord<Long, String> record :
                        consumer.poll(java.time.Duration.ofMillis(500))) {
                    chains.computeIfAbsent(record.key(), k -> new ArrayList<>())
                            .add(record.value());
                }
            }
        }
        // the sink's shards write a key's links in transactions of their own, in no set order
        chains.values().forEach(links -> links.sort(BY_LINK_NUMBER));
        return chains;
    }
}
