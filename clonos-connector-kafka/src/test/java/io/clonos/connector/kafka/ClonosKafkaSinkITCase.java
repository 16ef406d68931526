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

import io.clonos.connector.kafka.OutputTopics.Record;
import io.clonos.kafka.broker.EmbeddedKafka;
import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.minicluster.EmbeddedTaskManagers;
import io.clonos.streaming.causal.CausalServices;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.ClusterOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionJobVertex;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ClonosKafkaSink} on a real embedded Clonos cluster (two TaskManagers, slots spread) and a
 * real Kafka broker in the test's JVM. The job draws random numbers and fires processing-time
 * timers in two keyed subtasks, whose outputs race into one sink subtask; the sink's task fails
 * while its output since the last checkpoint is visible. A {@code read_committed} consumer must
 * then see every record exactly once, and only the sink's subtask restarts. Without the
 * determinants read back from Kafka the recovered sink would take its inputs in another order, put
 * records at other positions, and publish again what its predecessor had published.
 */
class ClonosKafkaSinkITCase {

    private static final int COUNT = 6_000;
    private static final int RATE = 1_500;
    private static final int FAIL_AT = COUNT / 2;
    private static final int PARTITIONS = 3;

    private static EmbeddedKafka kafka;

    private ClonosMiniCluster cluster;

    @BeforeAll
    static void startKafka() throws Exception {
        kafka = EmbeddedKafka.start();
    }

    @AfterAll
    static void stopKafka() {
        if (kafka != null) {
            kafka.close();
        }
    }

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
        FailOnce.FAILED.set(false);
    }

    @ParameterizedTest(name = "DSD {0}")
    @ValueSource(strings = {"-1", "1"})
    void failedSinkRecoversLocallyAndPublishesEveryRecordOnce(String dsd) throws Exception {
        String topic = createTopic("local-" + dsd.replace("-", "m"));
        cluster = start(Map.of("clonos.determinant-sharing-depth", dsd));
        JobID job = submit(nondeterministicJob(topic));

        AccessExecutionGraph graph = finished(job);
        assertThat(FailOnce.FAILED).as("the sink's task failed").isTrue();
        assertThat(restarted(graph))
                .as("only the sink's subtask restarts, once")
                .containsExactly(sinkVertex(graph) + "#0@1");
        assertEveryRecordOnce(topic, true);
    }

    /**
     * The sink's TaskManager is lost, and with it a subtask of every stage: the sink and the keyed
     * subtask upstream of it, whose determinants only the sink held, and Kafka holds now. At the
     * full sharing depth the slice recovers locally: the sink answers its recovery and its
     * producer's from what it reads back, and every record is published once.
     */
    @Test
    void lostTaskManagerOfTheSinkRecoversItsSliceLocally() throws Exception {
        String topic = createTopic("lost-slice");
        loseTheSinksTaskManager(topic, clonosSink(topic), Map.of());
        assertEveryRecordOnce(topic, true);
    }

    /**
     * The same lost slice at DSD 1: hops inside the TaskManager are free, so the sink handed its
     * keyed producer's log, one hop away inside the TaskManager, on to Kafka beside its own, and
     * the slice recovers locally.
     */
    @Test
    void lostTaskManagerOfTheSinkRecoversItsSliceLocallyAtDsd1() throws Exception {
        String topic = createTopic("lost-slice-dsd1");
        loseTheSinksTaskManager(
                topic, clonosSink(topic), Map.of("clonos.determinant-sharing-depth", "1"));
        assertEveryRecordOnce(topic, true);
    }

    /**
     * An unchanged job's Flink {@code KafkaSink} with {@code EXACTLY_ONCE}, served by the Clonos
     * sink under {@code clonos.kafka-sink.exactly-once: clonos}, recovers the same lost slice
     * locally; every record carries the Clonos sink's position (Flink's sink writes none), so the
     * substitute published it.
     */
    @Test
    void flinksExactlyOnceKafkaSinkServedByClonosRecoversALostSliceLocally() throws Exception {
        String topic = createTopic("flink-served");
        loseTheSinksTaskManager(
                topic, flinksSink(topic), Map.of("clonos.kafka-sink.exactly-once", "clonos"));
        assertEveryRecordOnce(topic, true);
        assertThat(readCommitted(topic).values().stream().flatMap(List::stream))
                .as("records the Clonos sink published")
                .allMatch(OutputTopics.Record::positioned);
    }

    private void loseTheSinksTaskManager(
            String topic, Sink<String> sink, Map<String, String> settings) throws Exception {
        Map<String, String> clonos = new HashMap<>(settings);
        clonos.putIfAbsent("clonos.determinant-sharing-depth", "-1");
        cluster = start(clonos);
        FailOnce.FAILED.set(true);
        JobID job = submit(nondeterministicJob(sink));

        awaitPublished(topic, COUNT / 3);
        Map<String, String> locations = locations(cluster.getExecutionGraph(job).get());
        String sinkLocation = locationOfSink(locations);
        Set<String> onLost = subtasksOn(locations, sinkLocation);
        assertThat(onLost).as("the sink's TaskManager runs a slice").hasSize(3);
        cluster.terminateTaskManager(EmbeddedTaskManagers.indexOf(cluster, sinkLocation)).get();

        assertThat(restarted(finished(job)))
                .as("only the lost TaskManager's subtasks restart, once")
                .isEqualTo(onLost);
    }

    /**
     * The other TaskManager is lost: a source and a keyed subtask, whose output reached the sink
     * that keeps running and holds their determinants. Only they restart; the sink publishes every
     * record once.
     */
    @Test
    void lostUpstreamTaskManagerRecoversItsSliceLocally() throws Exception {
        String topic = createTopic("lost-upstream");
        cluster = start(Map.of("clonos.determinant-sharing-depth", "-1"));
        FailOnce.FAILED.set(true);
        JobID job = submit(nondeterministicJob(topic));

        awaitPublished(topic, COUNT / 3);
        Map<String, String> locations = locations(cluster.getExecutionGraph(job).get());
        String sinkLocation = locationOfSink(locations);
        String lost =
                locations.values().stream()
                        .filter(location -> !location.equals(sinkLocation))
                        .findFirst()
                        .orElseThrow();
        Set<String> onLost = subtasksOn(locations, lost);
        assertThat(onLost).as("the other TaskManager runs a source and a keyed subtask").hasSize(2);
        cluster.terminateTaskManager(EmbeddedTaskManagers.indexOf(cluster, lost)).get();

        assertThat(restarted(finished(job)))
                .as("only the lost TaskManager's subtasks restart, once")
                .isEqualTo(onLost);
        assertEveryRecordOnce(topic, true);
    }

    /**
     * Every TaskManager is lost at once, and two new ones join: no task survives, but Kafka holds
     * what the sink held, every upstream log at the full depth. The whole job recovers by those
     * determinants, each subtask once, and publishes every record once. The TaskManagers go one
     * after the other; the local recovery waits for the restart strategy's 100 ms, so that the
     * first loss's replacements are not placed on the second TaskManager before it goes (they would
     * restart twice, locally: right, but not the loss of every task at once this is about).
     */
    @Test
    void everyTaskManagerLostRecoversFromTheDeterminantsInKafka() throws Exception {
        String topic = createTopic("lost-all");
        cluster =
                start(
                        Map.of(
                                "clonos.determinant-sharing-depth",
                                "-1",
                                "clonos.recovery.restart-delay",
                                "restart-strategy"));
        FailOnce.FAILED.set(true);
        JobID job = submit(nondeterministicJob(topic));

        awaitPublished(topic, COUNT / 3);
        Set<String> all = new TreeSet<>();
        locations(cluster.getExecutionGraph(job).get()).keySet().forEach(s -> all.add(s + "@1"));
        cluster.terminateTaskManager(1).get();
        cluster.terminateTaskManager(0).get();
        cluster.startTaskManager();
        cluster.startTaskManager();

        assertThat(restarted(finished(job)))
                .as("every subtask restarts once, recovered by determinants, not rolled back")
                .isEqualTo(all);
        assertEveryRecordOnce(topic, true);
    }

    private static String locationOfSink(Map<String, String> locations) {
        return locations.entrySet().stream()
                .filter(e -> e.getKey().contains("clonos-kafka"))
                .findFirst()
                .orElseThrow()
                .getValue();
    }

    private static Set<String> subtasksOn(Map<String, String> locations, String taskManager) {
        Set<String> on = new TreeSet<>();
        locations.forEach(
                (subtask, location) -> {
                    if (location.equals(taskManager)) {
                        on.add(subtask + "@1");
                    }
                });
        return on;
    }

    /** The same job without a failure: the output the failure tests compare with. */
    @Test
    void failureFreeRunPublishesEveryRecordOnce() throws Exception {
        String topic = createTopic("failure-free");
        cluster = start(Map.of());
        FailOnce.FAILED.set(true);
        JobID job = submit(nondeterministicJob(topic));

        assertThat(restarted(finished(job))).isEmpty();
        assertEveryRecordOnce(topic, true);
    }

    /**
     * With Flink's restart of the whole job, a deterministic job's regenerated output is the same
     * at every position: what the predecessor published is skipped, and the output stays exactly
     * once without any determinants.
     */
    @Test
    void globalRollbackOfADeterministicJobPublishesEveryRecordOnce() throws Exception {
        String topic = createTopic("global-deterministic");
        cluster = start(Map.of("clonos.recovery.mode", "global"));
        JobID job = submit(deterministicJob(topic));

        finished(job);
        assertThat(FailOnce.FAILED).as("the sink's task failed").isTrue();
        assertEveryRecordOnce(topic, false);
    }

    /**
     * A global rollback of the nondeterministic job regenerates other records at the published
     * positions: each is published as well, marked as divergent, so no record appears twice without
     * the mark.
     */
    @Test
    void globalRollbackOfANondeterministicJobMarksEveryRepublishedRecord() throws Exception {
        String topic = createTopic("global-nondeterministic");
        cluster = start(Map.of("clonos.recovery.mode", "global"));
        StreamExecutionEnvironment env =
                nondeterministicJob(clonosSink(topic), new FailAfterCheckpoint());
        env.getCheckpointConfig().setMinPauseBetweenCheckpoints(FailAfterCheckpoint.MIN_PAUSE);
        JobID job = submit(env);

        finished(job);
        assertThat(FailOnce.FAILED).as("the sink's task failed").isTrue();
        Map<String, List<Record>> read = readCommitted(topic);
        assertExactly(read.keySet(), expectedIds(true));
        Map<String, List<Record>> twice = OutputTopics.duplicates(read);
        assertThat(twice).as("the rollback regenerated records differently").isNotEmpty();
        twice.forEach(
                (id, copies) ->
                        assertThat(copies.stream().filter(r -> !r.divergent()).count())
                                .as("unmarked copies of " + id + ": " + copies)
                                .isEqualTo(1));
    }

    // ------------------------------------------------------------------------------------------

    /**
     * numbers (2) -> keyBy -> random numbers and processing-time timers (2) -> fail once (1) ->
     * sink (1): two channels race into the sink's task.
     */
    private static StreamExecutionEnvironment nondeterministicJob(String topic) {
        return nondeterministicJob(clonosSink(topic));
    }

    private static StreamExecutionEnvironment nondeterministicJob(Sink<String> sink) {
        return nondeterministicJob(sink, new FailOnce());
    }

    private static StreamExecutionEnvironment nondeterministicJob(
            Sink<String> sink, RichMapFunction<String, String> failure) {
        StreamExecutionEnvironment env = environment();
        DataStream<String> lines =
                numbers(env, 2).keyBy(i -> i % 8).process(new RandomAndTimers()).name("stamp");
        sinkTo(lines, sink, failure);
        return env;
    }

    /** numbers (1) -> "e,i" -> fail once -> sink, all chained: one order only. */
    private static StreamExecutionEnvironment deterministicJob(String topic) {
        StreamExecutionEnvironment env = environment();
        DataStream<String> lines = numbers(env, 1).map(i -> "e," + i + ",0").setParallelism(1);
        sinkTo(lines, clonosSink(topic), new FailOnce());
        return env;
    }

    private static StreamExecutionEnvironment environment() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(300);
        return env;
    }

    private static DataStream<Long> numbers(StreamExecutionEnvironment env, int parallelism) {
        return env.fromSource(
                        new DataGeneratorSource<>(
                                i -> i, COUNT, RateLimiterStrategy.perSecond(RATE), Types.LONG),
                        WatermarkStrategy.noWatermarks(),
                        "numbers")
                .setParallelism(parallelism);
    }

    private static void sinkTo(
            DataStream<String> lines, Sink<String> sink, RichMapFunction<String, String> failure) {
        lines.map(failure)
                .setParallelism(1)
                .name("fail once")
                .sinkTo(sink)
                .setParallelism(1)
                .name("clonos-kafka");
    }

    private static Sink<String> clonosSink(String topic) {
        return ClonosKafkaSink.<String>builder()
                .setBootstrapServers(kafka.bootstrapServers())
                .setTopics(topic)
                .setRecordSerializer(serializer(topic))
                .build();
    }

    /** Flink's sink, as an unchanged job builds it for exactly-once output. */
    private static Sink<String> flinksSink(String topic) {
        return KafkaSink.<String>builder()
                .setBootstrapServers(kafka.bootstrapServers())
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix("flinks-sink")
                .setRecordSerializer(serializer(topic))
                .build();
    }

    /** Keyed by the record's id. */
    private static KafkaRecordSerializationSchema<String> serializer(String topic) {
        return KafkaRecordSerializationSchema.<String>builder()
                .setTopic(topic)
                .setKeySerializationSchema(line -> idOf(line).getBytes(StandardCharsets.UTF_8))
                .setValueSerializationSchema(new SimpleStringSchema())
                .build();
    }

    /** Every element's record, and a timer's record for each element that registers one. */
    private static Set<String> expectedIds(boolean timers) {
        Set<String> ids = new TreeSet<>();
        LongStream.range(0, COUNT).forEach(i -> ids.add("e," + i));
        if (timers) {
            LongStream.range(0, COUNT)
                    .filter(RandomAndTimers::registersTimer)
                    .forEach(i -> ids.add("t," + i));
        }
        return ids;
    }

    /** Waits for the job to end, successfully, and returns its archived graph. */
    private AccessExecutionGraph finished(JobID job) throws Exception {
        assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess()).isTrue();
        return cluster.getArchivedExecutionGraph(job).get();
    }

    /** A read_committed consumer reads every expected record once, and nothing else. */
    private static void assertEveryRecordOnce(String topic, boolean timers) {
        Map<String, List<Record>> read = readCommitted(topic);
        assertThat(OutputTopics.duplicates(read)).as("records published twice").isEmpty();
        assertExactly(read.keySet(), expectedIds(timers));
    }

    private static void assertExactly(Set<String> read, Set<String> expected) {
        Set<String> missing = new TreeSet<>(expected);
        missing.removeAll(read);
        Set<String> unexpected = new TreeSet<>(read);
        unexpected.removeAll(expected);
        assertThat(missing).as("records lost").isEmpty();
        assertThat(unexpected).as("records nobody sent").isEmpty();
    }

    private static String idOf(String line) {
        return line.substring(0, line.lastIndexOf(','));
    }

    private ClonosMiniCluster start(Map<String, String> clonos) throws Exception {
        Configuration config = Configuration.fromMap(clonos);
        config.set(RestOptions.BIND_PORT, "0");
        config.set(ClusterOptions.EVENLY_SPREAD_OUT_SLOTS_STRATEGY, true);
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        config.set(
                RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        ClonosMiniCluster started = ClonosMiniCluster.create(config, 2, 2);
        started.start();
        return started;
    }

    private JobID submit(StreamExecutionEnvironment env) throws Exception {
        return cluster.submitJob(env.getStreamGraph().getJobGraph()).get().getJobID();
    }

    private static String createTopic(String name) throws Exception {
        return OutputTopics.create(kafka.bootstrapServers(), "clonos-sink-" + name, PARTITIONS);
    }

    private static Map<String, List<Record>> readCommitted(String topic) {
        return OutputTopics.readCommitted(kafka.bootstrapServers(), topic, PARTITIONS);
    }

    private static void awaitPublished(String topic, long records) throws Exception {
        OutputTopics.awaitPublished(kafka.bootstrapServers(), topic, PARTITIONS, records);
    }

    /** Where each subtask runs, as "vertex#subtask" to the TaskManager's resource id. */
    private static Map<String, String> locations(AccessExecutionGraph graph) {
        Map<String, String> locations = new TreeMap<>();
        for (AccessExecutionJobVertex vertex : graph.getVerticesTopologically()) {
            for (AccessExecutionVertex subtask : vertex.getTaskVertices()) {
                locations.put(
                        vertex.getName() + "#" + subtask.getParallelSubtaskIndex(),
                        subtask.getCurrentAssignedResourceLocation()
                                .getResourceID()
                                .getResourceIdString());
            }
        }
        return locations;
    }

    /** Subtasks whose last attempt is not the first, as "vertex#subtask@attempt". */
    private static Set<String> restarted(AccessExecutionGraph graph) {
        Set<String> restarted = new TreeSet<>();
        for (AccessExecutionJobVertex vertex : graph.getVerticesTopologically()) {
            for (AccessExecutionVertex subtask : vertex.getTaskVertices()) {
                int attempt = subtask.getCurrentExecutionAttempt().getAttemptNumber();
                if (attempt > 0) {
                    restarted.add(
                            vertex.getName()
                                    + "#"
                                    + subtask.getParallelSubtaskIndex()
                                    + "@"
                                    + attempt);
                }
            }
        }
        return restarted;
    }

    private static String sinkVertex(AccessExecutionGraph graph) {
        for (AccessExecutionJobVertex vertex : graph.getVerticesTopologically()) {
            if (vertex.getName().contains("clonos-kafka")) {
                return vertex.getName();
            }
        }
        throw new AssertionError("no vertex of the sink");
    }

    /**
     * Stamps each number with a random number drawn through the task's causal services; every 50th
     * registers a processing-time timer whose record carries the time it fired.
     */
    static final class RandomAndTimers extends KeyedProcessFunction<Long, Long, String> {

        private transient ListState<Long> pending;

        /**
         * Not near the end of either source subtask's range (the generator gives each a half): a
         * processing-time timer still pending when the input ends does not fire, so whether its
         * record exists depends on timing.
         */
        static boolean registersTimer(long i) {
            return i % 50 == 0 && i % (COUNT / 2) < COUNT / 2 - 500;
        }

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext context) {
            pending =
                    getRuntimeContext()
                            .getListState(new ListStateDescriptor<>("pending", Types.LONG));
        }

        @Override
        public void processElement(Long i, Context ctx, Collector<String> out) throws Exception {
            int random = CausalServices.of(getRuntimeContext()).random().nextInt(1_000_000);
            out.collect("e," + i + "," + random);
            if (registersTimer(i)) {
                pending.add(i);
                ctx.timerService()
                        .registerProcessingTimeTimer(
                                ctx.timerService().currentProcessingTime() + 20);
            }
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out)
                throws Exception {
            for (Long i : pending.get()) {
                out.collect("t," + i + "," + timestamp);
            }
            pending.clear();
        }
    }

    /** Fails its first attempt once, at its {@value #FAIL_AT}th record. */
    static final class FailOnce extends RichMapFunction<String, String> {

        static final AtomicBoolean FAILED = new AtomicBoolean();

        private long seen;

        @Override
        public String map(String line) {
            if (++seen == FAIL_AT
                    && getRuntimeContext().getTaskInfo().getAttemptNumber() == 0
                    && FAILED.compareAndSet(false, true)) {
                throw new IllegalStateException("injected failure of the sink's task");
            }
            return line;
        }
    }

    /**
     * Fails its first attempt once, {@value #AFTER} records after the first checkpoint it hears
     * completed: the writer publishes every few milliseconds, so records since that checkpoint's
     * barrier are visible by then, and a rollback to it regenerates them. No later checkpoint
     * completes before the failure: the test's pause between checkpoints ({@value #MIN_PAUSE} ms)
     * is longer than the input takes for {@value #AFTER} records.
     */
    static final class FailAfterCheckpoint extends RichMapFunction<String, String>
            implements CheckpointListener {

        static final long MIN_PAUSE = 1_000;

        private static final int AFTER = 150;

        private long sinceCheckpoint = -1;

        @Override
        public String map(String line) {
            if (sinceCheckpoint >= 0
                    && ++sinceCheckpoint == AFTER
                    && getRuntimeContext().getTaskInfo().getAttemptNumber() == 0
                    && FailOnce.FAILED.compareAndSet(false, true)) {
                throw new IllegalStateException("injected failure after a checkpoint");
            }
            return line;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            if (sinceCheckpoint < 0) {
                sinceCheckpoint = 0;
            }
        }
    }
}
