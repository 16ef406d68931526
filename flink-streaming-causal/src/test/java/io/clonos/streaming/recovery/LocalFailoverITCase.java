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

package io.clonos.streaming.recovery;

import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.minicluster.EmbeddedTaskManagers;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.SinkFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Local failover on a real embedded cluster (3 TaskManagers): a task that fails, or a TaskManager
 * that is lost, is recovered while every other task keeps running with the same attempt; the job
 * completes, no input number's effect is lost (at-least-once), and checkpoints complete after the
 * recovery.
 *
 * <p>The job: numbers 1..N from a rate-limited source, keyed by {@code n % KEYS}, a keyed running
 * count and sum, and a sink that collects {@code key,n,count,sum}. Each stage is its own task.
 */
class LocalFailoverITCase {

    private static final long NUMBERS = 12_000;
    private static final int KEYS = 6;
    private static final int PARALLELISM = 2;

    /** What the sink received; static because the embedded cluster shares this JVM. */
    static final Queue<String> SINK = new ConcurrentLinkedQueue<>();

    private ClonosMiniCluster cluster;

    @BeforeEach
    void reset() {
        SINK.clear();
        FailureSwitch.reset();
    }

    private void startCluster(int taskManagers, int slots) throws Exception {
        startCluster(taskManagers, slots, new Configuration());
    }

    private void startCluster(int taskManagers, int slots, Configuration config) throws Exception {
        cluster = RecoveryClusters.start(config, taskManagers, slots, 5);
    }

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void failedMiddleTaskIsRecoveredLocally() throws Exception {
        startCluster(3, 2);
        // early: the keys of subtask 0 may be few, and a failure after its sources finished
        // cannot be recovered locally (their in-flight logs are released with their partitions)
        FailureSwitch.arm("running-sum", 0, NUMBERS / PARALLELISM / 6);
        runAndCheck(Set.of("running-sum[0]"));
    }

    @Test
    void failedSourceTaskIsRecoveredLocally() throws Exception {
        startCluster(3, 2);
        FailureSwitch.arm("tag", 1, NUMBERS / PARALLELISM / 3);
        runAndCheck(Set.of("source[1]"));
    }

    @Test
    void failedSinkTaskIsRecoveredLocally() throws Exception {
        startCluster(3, 2);
        FailureSwitch.arm("sink", 0, NUMBERS / 3 / PARALLELISM);
        runAndCheck(Set.of("sink[0]"));
    }

    /** The restarted task fails again while it replays its input: it is recovered again, alone. */
    @Test
    void failureDuringRecoveryIsRecoveredLocally() throws Exception {
        startCluster(3, 2);
        // early, as for the middle task: subtask 0 may own a single key (2000 numbers), so at a
        // third of its share the failure came near its last record; the second attempt then had
        // fewer than 20 records left, or (one CI run) failed after the sources had finished
        FailureSwitch.arm("running-sum", 0, NUMBERS / PARALLELISM / 6);
        FailureSwitch.armAgain(20);
        runAndCheck(Set.of("running-sum[0]"));
        assertThat(FailureSwitch.failedAgainAt())
                .as("the second attempt failed too")
                .isGreaterThan(FailureSwitch.failedAt());
    }

    /**
     * A task with two inputs (two sources, connected and keyed) fails and is recovered alone; both
     * its inputs are replayed. With causal logging off (DSD 0, at-least-once): with it on, such a
     * task cannot be recovered by determinants yet and rolls back globally (ExactlyOnceITCase).
     */
    @Test
    void failedTwoInputTaskIsRecoveredLocally() throws Exception {
        startCluster(
                3,
                2,
                Configuration.fromMap(java.util.Map.of("clonos.determinant-sharing-depth", "0")));
        FailureSwitch.arm("running-sum", 1, NUMBERS / PARALLELISM / 3);
        JobID job = cluster.submitJob(twoInputJobGraph()).get().getJobID();
        assertThat(cluster.requestJobResult(job).get(90, TimeUnit.SECONDS).isSuccess()).isTrue();
        AccessExecutionGraph graph = cluster.getArchivedExecutionGraph(job).get();
        assertThat(restartedSubtasks(graph))
                .as(() -> Attempts.why(graph))
                .isEqualTo(Set.of("running-sum[1]"));
        assertNoNumberLost();
        assertCheckpointCompletedAfter(graph, FailureSwitch.failedAt());
    }

    /**
     * The odd numbers from one source, the even ones from another, summed per key by a two-input
     * task.
     */
    private static JobGraph twoInputJobGraph() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARALLELISM);
        env.enableCheckpointing(200);
        DataStream<Tuple2<Long, Long>> odd = numbers(env, "odd", 1);
        DataStream<Tuple2<Long, Long>> even = numbers(env, "even", 2);
        odd.connect(even)
                .keyBy(t -> t.f0, t -> t.f0)
                .process(new TwoInputRunningSum())
                .name("running-sum")
                .addSink(new CollectingSink())
                .name("sink")
                .disableChaining();
        return env.getStreamGraph().getJobGraph();
    }

    private static DataStream<Tuple2<Long, Long>> numbers(
            StreamExecutionEnvironment env, String name, long first) {
        return env.fromSource(
                        new DataGeneratorSource<>(
                                index -> first + 2 * index,
                                NUMBERS / 2,
                                RateLimiterStrategy.perSecond(1_000),
                                Types.LONG),
                        WatermarkStrategy.noWatermarks(),
                        name)
                .map(n -> Tuple2.of(n % KEYS, n))
                .returns(Types.TUPLE(Types.LONG, Types.LONG))
                .name(name + "-tag");
    }

    /** The running sum of {@link RunningSum}, fed by two inputs. */
    static final class TwoInputRunningSum
            extends org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction<
                    Long, Tuple2<Long, Long>, Tuple2<Long, Long>, String> {
        private transient ValueState<Tuple2<Long, Long>> countAndSum;
        private long seen;

        @Override
        public void open(Configuration parameters) {
            countAndSum = getRuntimeContext().getState(RunningSum.state());
        }

        @Override
        public void processElement1(Tuple2<Long, Long> tagged, Context ctx, Collector<String> out)
                throws Exception {
            add(tagged, out);
        }

        @Override
        public void processElement2(Tuple2<Long, Long> tagged, Context ctx, Collector<String> out)
                throws Exception {
            add(tagged, out);
        }

        private void add(Tuple2<Long, Long> tagged, Collector<String> out) throws Exception {
            FailureSwitch.maybeFail(
                    "running-sum",
                    getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                    getRuntimeContext().getTaskInfo().getAttemptNumber(),
                    ++seen);
            out.collect(RunningSum.add(countAndSum, tagged));
        }
    }

    /** All channels local: producers and consumers share the one TaskManager. */
    @Test
    void failedMiddleTaskWithLocalChannelsIsRecoveredLocally() throws Exception {
        startCluster(1, 4);
        FailureSwitch.arm("running-sum", 1, NUMBERS / PARALLELISM / 3);
        runAndCheck(Set.of("running-sum[1]"));
    }

    /** clonos.recovery.mode: global is Flink's own restart: every task gets a new attempt. */
    /**
     * The restart strategy would wait an hour before any restart; {@code
     * clonos.recovery.restart-delay: 0 ms} recovers the failed task at once, and still alone.
     */
    @Test
    void restartDelayReplacesTheStrategysDelayForLocalRecoveries() throws Exception {
        startCluster(
                3,
                2,
                Configuration.fromMap(
                        Map.of(
                                "restart-strategy.fixed-delay.delay", "1 h",
                                "clonos.recovery.restart-delay", "0 ms")));
        FailureSwitch.arm("running-sum", 0, NUMBERS / PARALLELISM / 6);
        runAndCheck(Set.of("running-sum[0]"));
    }

    /**
     * Checkpoints go on while a failed task waits for its local restart (the job stays RUNNING,
     * unlike Flink's, which stops its checkpoints while RESTARTING). Flink's plan calculator counts
     * a failed attempt as finished; a checkpoint completed in that window would record the task as
     * finished without state, and its restart from it would deploy it finished. Such checkpoints
     * are refused: the task restarts from the last checkpoint before its failure.
     */
    @Test
    void checkpointsWhileAFailedTaskWaitsForItsRestartDoNotCountItFinished() throws Exception {
        startCluster(3, 2, Configuration.fromMap(Map.of("clonos.recovery.restart-delay", "2 s")));
        FailureSwitch.arm("running-sum", 0, NUMBERS / PARALLELISM / 6);
        runAndCheck(Set.of("running-sum[0]"));
    }

    /**
     * As above, with a task of the job finished before the failure (a pipeline of its own, here):
     * then Flink's calculator takes its path for finished tasks, which also counts the failed
     * attempt as finished, and triggers the failed task's consumers in its place, so that such a
     * checkpoint completes. Found by a lost TaskManager whose source had finished: the global
     * rollback restored a checkpoint that recorded the lost sink as finished, and the sink failed
     * on every record after it.
     */
    @Test
    void checkpointsWhileAFailedTaskWaitsBesideAFinishedTaskDoNotCountItFinished()
            throws Exception {
        startCluster(3, 2, Configuration.fromMap(Map.of("clonos.recovery.restart-delay", "2 s")));
        FailureSwitch.arm("running-sum", 0, NUMBERS / PARALLELISM / 6);
        runAndCheck(jobGraph(true), Set.of("running-sum[0]"));
    }

    @Test
    void globalModeRestartsEveryTask() throws Exception {
        startCluster(3, 2, Configuration.fromMap(Map.of("clonos.recovery.mode", "global")));
        FailureSwitch.arm("running-sum", 0, NUMBERS / PARALLELISM / 3);
        runAndCheck(allSubtasks());
    }

    /**
     * An in-memory in-flight log whose memory holds no buffer is always full: it holds its producer
     * back and lets data through only while a checkpoint's barrier is on its way to it. The job
     * still completes (no barrier is stuck behind data the log refuses), and the failed task alone
     * recovers from the logs.
     */
    @Test
    void aFullInMemoryLogHoldsItsProducerBackAndTheFailedTaskRecoversLocally() throws Exception {
        InFlightLogFigures.clear();
        startCluster(
                3,
                2,
                Configuration.fromMap(
                        Map.of(
                                "clonos.in-flight-log.type", "in-memory",
                                "clonos.in-flight-log.memory", "16b",
                                "metrics.reporter.heldback.factory.class",
                                        InFlightLogFigures.FACTORY)));
        FailureSwitch.arm("running-sum", 0, NUMBERS / PARALLELISM / 6);
        runAndCheck(Set.of("running-sum[0]"));
        assertThat(InFlightLogFigures.heldBackMillis())
                .as("milliseconds the logs held their producers back")
                .isPositive();
    }

    /**
     * The JobManager holds periodic checkpoints back from the restart until the restarted task
     * reported its replay's end, and no longer: with a limit far beyond the job's run, checkpoints
     * were held back, and one completed after the failure all the same.
     */
    @Test
    void checkpointsAreHeldBackWhileTheRestartedTaskReplays() throws Exception {
        assertThat(checkpointsHeldBackWithAPauseOf("10 min"))
                .as("milliseconds the JobManager held checkpoints back")
                .isPositive()
                .isLessThan(Duration.ofMinutes(10).toMillis());
    }

    /** With {@code clonos.recovery.checkpoint-pause: 0 ms} checkpoints go on during a replay. */
    @Test
    void aPauseOfZeroHoldsNoCheckpointBack() throws Exception {
        assertThat(checkpointsHeldBackWithAPauseOf("0 ms")).isZero();
    }

    /** Recovers a failed middle task locally; how long checkpoints were held back meanwhile. */
    private long checkpointsHeldBackWithAPauseOf(String pause) throws Exception {
        InFlightLogFigures.clear();
        startCluster(
                3,
                2,
                Configuration.fromMap(
                        Map.of(
                                "clonos.recovery.checkpoint-pause",
                                pause,
                                "metrics.reporter.heldback.factory.class",
                                InFlightLogFigures.FACTORY)));
        FailureSwitch.arm("running-sum", 1, NUMBERS / PARALLELISM / 3);
        runAndCheck(Set.of("running-sum[1]"));
        return InFlightLogFigures.checkpointsHeldBackMillis();
    }

    /**
     * A spillable in-flight log whose memory holds no buffer writes every buffer to disk and
     * replays it from there: the restarted task alone recovers, under every spill policy.
     */
    @ParameterizedTest(name = "spill policy {0}")
    @ValueSource(strings = {"eager", "epoch", "availability"})
    void spilledInFlightLogIsReplayedFromDisk(String policy) throws Exception {
        startCluster(
                3,
                2,
                Configuration.fromMap(
                        Map.of(
                                "clonos.in-flight-log.type", "spillable",
                                "clonos.in-flight-log.spill-policy", policy,
                                "clonos.in-flight-log.memory", "16b")));
        // early, as for the middle task above: with every buffer written to disk the consumer lags,
        // and a failure after its sources finished cannot be replayed (their partitions are gone)
        FailureSwitch.arm("running-sum", 0, NUMBERS / PARALLELISM / 6);
        runAndCheck(Set.of("running-sum[0]"));
    }

    /** With in-flight logging disabled every failure is Flink's restart of the whole job. */
    @Test
    void disabledInFlightLogRollsBackGlobally() throws Exception {
        startCluster(3, 2, Configuration.fromMap(Map.of("clonos.in-flight-log.type", "disabled")));
        FailureSwitch.arm("running-sum", 0, NUMBERS / PARALLELISM / 3);
        runAndCheck(allSubtasks());
    }

    private static Set<String> allSubtasks() {
        Set<String> all = new HashSet<>();
        for (String operator : new String[] {"source", "running-sum", "sink"}) {
            for (int i = 0; i < PARALLELISM; i++) {
                all.add(operator + "[" + i + "]");
            }
        }
        return all;
    }

    private void runAndCheck(Set<String> expectedRestarts) throws Exception {
        runAndCheck(jobGraph(), expectedRestarts);
    }

    private void runAndCheck(JobGraph jobGraph, Set<String> expectedRestarts) throws Exception {
        JobID job = cluster.submitJob(jobGraph).get().getJobID();
        assertThat(cluster.requestJobResult(job).get(90, TimeUnit.SECONDS).isSuccess()).isTrue();
        AccessExecutionGraph graph = cluster.getArchivedExecutionGraph(job).get();
        assertThat(restartedSubtasks(graph))
                .as(() -> Attempts.why(graph))
                .isEqualTo(expectedRestarts);
        assertNoNumberLost();
        assertCheckpointCompletedAfter(graph, FailureSwitch.failedAt());
    }

    @Test
    void lostTaskManagerIsRecoveredLocally() throws Exception {
        startCluster(3, 2);
        JobID job = cluster.submitJob(jobGraph()).get().getJobID();
        awaitProgress(NUMBERS / 3);
        Set<String> before = taskManagerIds();
        Map<String, String> locations = subtaskLocations(cluster.getExecutionGraph(job).get());

        long killedAt = System.currentTimeMillis();
        cluster.terminateTaskManager(firstTaskManagerHosting(locations)).get();

        assertThat(cluster.requestJobResult(job).get(90, TimeUnit.SECONDS).isSuccess()).isTrue();
        Set<String> after = taskManagerIds();
        Set<String> killed = new HashSet<>(before);
        killed.removeAll(after);
        Set<String> onKilled = new HashSet<>();
        locations.forEach(
                (subtask, tm) -> {
                    if (killed.contains(tm)) {
                        onKilled.add(subtask);
                    }
                });
        AccessExecutionGraph graph = cluster.getArchivedExecutionGraph(job).get();
        assertThat(onKilled).isNotEmpty();
        assertThat(restartedSubtasks(graph)).as(() -> Attempts.why(graph)).isEqualTo(onKilled);
        assertNoNumberLost();
        assertCheckpointCompletedAfter(graph, killedAt);
    }

    // ------------------------------------------------------------------------------------------

    private static JobGraph jobGraph() {
        return jobGraph(false);
    }

    /** The running sums; with {@code finishedPipeline} also a pipeline that ends at once. */
    private static JobGraph jobGraph(boolean finishedPipeline) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARALLELISM);
        env.enableCheckpointing(200);
        if (finishedPipeline) {
            env.fromData(1L).name("finished").sinkTo(new DiscardingSink<>()).name("finished-sink");
        }
        DataStream<Tuple2<Long, Long>> tagged =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        index -> index + 1,
                                        NUMBERS,
                                        RateLimiterStrategy.perSecond(2_000),
                                        Types.LONG),
                                WatermarkStrategy.noWatermarks(),
                                "source")
                        .map(new Tag())
                        .name("tag");
        tagged.keyBy(t -> t.f0)
                .process(new RunningSum())
                .name("running-sum")
                .addSink(new CollectingSink())
                .name("sink")
                .disableChaining();
        return env.getStreamGraph().getJobGraph();
    }

    /** n -> (n % KEYS, n); chained to the source, so it fails the source task. */
    static final class Tag extends RichMapFunction<Long, Tuple2<Long, Long>> {
        private long seen;

        @Override
        public Tuple2<Long, Long> map(Long n) {
            FailureSwitch.maybeFail(
                    "tag",
                    getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                    getRuntimeContext().getTaskInfo().getAttemptNumber(),
                    ++seen);
            return Tuple2.of(n % KEYS, n);
        }
    }

    static final class RunningSum extends KeyedProcessFunction<Long, Tuple2<Long, Long>, String> {

        static ValueStateDescriptor<Tuple2<Long, Long>> state() {
            return new ValueStateDescriptor<>("count-and-sum", Types.TUPLE(Types.LONG, Types.LONG));
        }

        /** Adds a number to its key's running count and sum; returns the line for the sink. */
        static String add(ValueState<Tuple2<Long, Long>> countAndSum, Tuple2<Long, Long> tagged)
                throws Exception {
            Tuple2<Long, Long> current = countAndSum.value();
            Tuple2<Long, Long> next =
                    current == null
                            ? Tuple2.of(1L, tagged.f1)
                            : Tuple2.of(current.f0 + 1, current.f1 + tagged.f1);
            countAndSum.update(next);
            return tagged.f0 + "," + tagged.f1 + "," + next.f0 + "," + next.f1;
        }

        private transient ValueState<Tuple2<Long, Long>> countAndSum;
        private long seen;

        @Override
        public void open(Configuration parameters) {
            countAndSum = getRuntimeContext().getState(RunningSum.state());
        }

        @Override
        public void processElement(Tuple2<Long, Long> tagged, Context ctx, Collector<String> out)
                throws Exception {
            FailureSwitch.maybeFail(
                    "running-sum",
                    getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                    getRuntimeContext().getTaskInfo().getAttemptNumber(),
                    ++seen);
            out.collect(add(countAndSum, tagged));
        }
    }

    static final class CollectingSink
            extends org.apache.flink.streaming.api.functions.sink.RichSinkFunction<String> {
        private long seen;

        @Override
        public void invoke(String value, SinkFunction.Context context) {
            FailureSwitch.maybeFail(
                    "sink",
                    getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                    getRuntimeContext().getTaskInfo().getAttemptNumber(),
                    ++seen);
            SINK.add(value);
        }
    }

    /** Fails one subtask of one operator once, in its first attempt, after a number of records. */
    static final class FailureSwitch {
        private static volatile String operator;
        private static volatile int subtask;
        private static volatile long afterRecords;

        /** After how many records the second attempt fails too; 0: it does not. */
        private static volatile long againAfterRecords;

        private static final AtomicLong FAILED_AT = new AtomicLong();
        private static final AtomicLong FAILED_AGAIN_AT = new AtomicLong();

        static void arm(String op, int index, long records) {
            operator = op;
            subtask = index;
            afterRecords = records;
        }

        static void armAgain(long records) {
            againAfterRecords = records;
        }

        static void reset() {
            operator = null;
            againAfterRecords = 0;
            FAILED_AT.set(0);
            FAILED_AGAIN_AT.set(0);
        }

        static long failedAt() {
            return FAILED_AT.get();
        }

        static long failedAgainAt() {
            return FAILED_AGAIN_AT.get();
        }

        static void maybeFail(String op, int index, int attempt, long records) {
            if (!op.equals(operator) || index != subtask) {
                return;
            }
            if (attempt == 0
                    && records == afterRecords
                    && FAILED_AT.compareAndSet(0, System.currentTimeMillis())) {
                throw new RuntimeException(
                        "Injected failure of "
                                + op
                                + "["
                                + index
                                + "] after "
                                + records
                                + " records");
            }
            if (attempt == 1
                    && records == againAfterRecords
                    && FAILED_AGAIN_AT.compareAndSet(0, System.currentTimeMillis())) {
                throw new RuntimeException(
                        "Injected failure of "
                                + op
                                + "["
                                + index
                                + "] during its recovery, after "
                                + records
                                + " records");
            }
        }
    }

    // ------------------------------------------------------------------------------------------

    private static void assertNoNumberLost() {
        Set<Long> seen = new HashSet<>();
        for (String line : SINK) {
            seen.add(Long.parseLong(line.split(",")[1]));
        }
        Set<Long> missing = new HashSet<>();
        for (long n = 1; n <= NUMBERS; n++) {
            if (!seen.contains(n)) {
                missing.add(n);
            }
        }
        assertThat(missing).as("numbers whose effect never reached the sink").isEmpty();
    }

    private static void assertCheckpointCompletedAfter(AccessExecutionGraph graph, long timestamp) {
        CompletedCheckpointStats latest =
                graph.getCheckpointStatsSnapshot().getHistory().getLatestCompletedCheckpoint();
        assertThat(latest).as("a completed checkpoint").isNotNull();
        assertThat(latest.getTriggerTimestamp())
                .as("the last completed checkpoint was triggered after the failure")
                .isGreaterThan(timestamp);
    }

    /** {@link Attempts#restarted}, each name as {@link #shortName} spells it. */
    private static Set<String> restartedSubtasks(AccessExecutionGraph graph) {
        Set<String> restarted = new HashSet<>();
        Attempts.restarted(graph).forEach(subtask -> restarted.add(shortName(subtask)));
        return restarted;
    }

    /** {@link Attempts#locations}, each name as {@link #shortName} spells it. */
    private static Map<String, String> subtaskLocations(AccessExecutionGraph graph) {
        Map<String, String> locations = new HashMap<>();
        Attempts.locations(graph).forEach((subtask, at) -> locations.put(shortName(subtask), at));
        return locations;
    }

    /** "Source: source -> tag[0]" -> "source[0]"; "running-sum[0]" stays. */
    private static String shortName(String subtask) {
        String name = subtask.replace("Source: ", "").replace("Sink: ", "");
        int arrow = name.indexOf(" -> ");
        return arrow >= 0 ? name.substring(0, arrow) + name.substring(name.lastIndexOf('[')) : name;
    }

    /** The index (start order) of the TaskManager that hosts subtask 0 of the source. */
    private int firstTaskManagerHosting(Map<String, String> locations) throws Exception {
        return EmbeddedTaskManagers.indexOf(cluster, locations.get("source[0]"));
    }

    private Set<String> taskManagerIds() throws Exception {
        Set<String> ids = new HashSet<>();
        for (JsonNode tm : rest("/taskmanagers").path("taskmanagers")) {
            ids.add(tm.path("id").asText());
        }
        return ids;
    }

    private JsonNode rest(String path) throws Exception {
        URI base = cluster.getRestAddress().get();
        HttpResponse<String> response =
                HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(base.resolve(path)).build(),
                                HttpResponse.BodyHandlers.ofString());
        return new ObjectMapper().readTree(response.body());
    }

    private static void awaitProgress(long records) throws InterruptedException {
        Instant deadline = Instant.now().plus(Duration.ofMinutes(1));
        while (SINK.size() < records && Instant.now().isBefore(deadline)) {
            Thread.sleep(50);
        }
        assertThat(SINK.size())
                .as("records through the job before the TaskManager is lost")
                .isGreaterThanOrEqualTo((int) records);
    }
}
