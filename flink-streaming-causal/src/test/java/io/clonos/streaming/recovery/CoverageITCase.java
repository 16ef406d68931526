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

import io.clonos.examples.InterleavingSplitsSource;
import io.clonos.examples.LegacyNumbersSource;
import io.clonos.examples.WallClockJob;
import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.jobgraph.VertexReplay;
import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.protocol.FailTaskRequest;
import io.clonos.runtime.protocol.SchedulerEndpoint;
import io.clonos.streaming.jobgraph.StreamTaskRewriter;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.cep.CEP;
import org.apache.flink.cep.functions.PatternProcessFunction;
import org.apache.flink.cep.pattern.Pattern;
import org.apache.flink.cep.pattern.conditions.SimpleCondition;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.streaming.api.datastream.AsyncDataStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.IterativeStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.async.AsyncFunction;
import org.apache.flink.streaming.api.functions.async.ResultFuture;
import org.apache.flink.streaming.api.functions.co.BroadcastProcessFunction;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.streaming.api.functions.co.ProcessJoinFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.util.retryable.AsyncRetryStrategies;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.util.Collector;
import org.apache.flink.util.InstantiationUtil;
import org.apache.flink.util.OutputTag;
import org.apache.flink.util.SerializedValue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The coverage table of docs/coverage.md, generated: each job shape runs on an embedded Clonos
 * cluster, subtask 0 of its operator under test fails once the job checkpointed, and what happened
 * is read from the finished job: local (only that subtask restarted) or global (others restarted),
 * with the reason the cluster-side rewriting gives the vertex. The test fails when the table in the
 * docs differs from what the code does; {@code -Dclonos.coverage.write=true} writes it anew.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CoverageITCase {

    private static final String UNDER_TEST = "under-test";
    private static final int PARALLELISM = 2;
    private static final Path TABLE = Paths.get("..", "docs", "coverage.md");

    private ClonosMiniCluster cluster;

    /**
     * A job shape: the row's name, the job, whose operator under test is named so, and the classes
     * that go into the job's jar (Flink's user-code class loader loads them from there, as from a
     * user's jar), if any.
     */
    private record Shape(
            String name,
            Function<StreamExecutionEnvironment, DataStream<?>> job,
            List<Class<?>> jobJar) {
        Shape(String name, Function<StreamExecutionEnvironment, DataStream<?>> job) {
            this(name, job, List.of());
        }
    }

    @BeforeAll
    void startCluster() throws Exception {
        cluster =
                RecoveryClusters.start(
                        Configuration.fromMap(Map.of("clonos.recovery.reconnect-timeout", "10 s")),
                        2,
                        4,
                        5);
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void theCoverageTableIsWhatTheCodeDoes() throws Exception {
        StringBuilder table = new StringBuilder();
        table.append("# Coverage: which failures recover locally\n\n")
                .append("Generated by `CoverageITCase` (flink-streaming-causal), which runs each")
                .append(" shape on an\nembedded cluster of two TaskManagers at parallelism ")
                .append(PARALLELISM)
                .append(", fails subtask 0 of the operator under test once the\n")
                .append("job checkpointed, and reads after the job ended which subtasks")
                .append(" restarted. Regenerate with\n")
                .append("`./mvnw -pl flink-streaming-causal -am verify")
                .append(" -Dtest=CoverageITCase -Dsurefire.failIfNoSpecifiedTests=false")
                .append(" -Dclonos.coverage.write=true`.\n")
                .append("A global row's vertex is named in a warning when the job is submitted.\n")
                .append("A SQL statement's operator under test is a map chained behind the")
                .append(" planner's last operator, so the\nplanner's operators of that task")
                .append(" fail with it; its tables are datagen tables with a watermark.\n")
                .append("Unchanged user code runs from the job's jar, as a user submits it.\n")
                .append("Beyond this table: a SQL window aggregate, an interval join and a")
                .append(" `MATCH_RECOGNIZE` in one job\nunder SIGKILL on the standalone cluster")
                .append(" (`SqlOnClonosIT`), as is a `GROUP BY` from a `kafka` table into an")
                .append("\n`upsert-kafka` table written in Kafka transactions; a job restored")
                .append(" from a savepoint at another\nparallelism (`RescaledRestoreITCase`);")
                .append(" exactly-once output to Kafka without transactions\n")
                .append("(`ClonosKafkaSinkITCase`: the sink's task, its TaskManager's slice,")
                .append(" the upstream TaskManager,\nevery TaskManager; an unchanged job's Flink")
                .append(" `KafkaSink` served by it), and the same under SIGKILL\non the standalone")
                .append(" cluster with the broker in a process of its own (`StandaloneClusterIT`:")
                .append(" the\nsink's TaskManager, an upstream one, both, every TaskManager).\n\n")
                .append("Local: Clonos restarted the failed subtask alone and it replayed.")
                .append(" Flink's restart: the\nvertex cannot be recovered by determinants,")
                .append(" and Flink's failover strategy restarted the failed\n")
                .append("subtask's pipelined region from the last checkpoint.\n\n")
                .append("| Shape | Operator under test | Recovery | Subtasks restarted |")
                .append(" Why not local |\n")
                .append("|---|---|---|---|---|\n");
        for (Shape shape : shapes()) {
            Row row = run(shape);
            assertThat(row.local() || row.whyNotLocal().isPresent())
                    .as(
                            "%s restarted more than the failed subtask without a documented reason",
                            shape.name())
                    .isTrue();
            table.append("| ")
                    .append(shape.name())
                    .append(" | ")
                    // the SQL planner numbers its operators across the JVM's jobs
                    .append(row.vertex().replaceAll("\\[\\d+]", ""))
                    .append(" | ")
                    .append(row.whyNotLocal().isPresent() ? "Flink's restart" : "local")
                    .append(" | ")
                    .append(row.restarted())
                    .append(" of ")
                    .append(row.subtasks())
                    .append(" | ")
                    .append(row.whyNotLocal().orElse(""))
                    .append(" |\n");
        }
        String generated = table.toString();
        if (Boolean.getBoolean("clonos.coverage.write")) {
            Files.writeString(TABLE, generated, StandardCharsets.UTF_8);
        }
        assertThat(Files.readString(TABLE, StandardCharsets.UTF_8))
                .as(
                        "docs/coverage.md is not what the code does; regenerate it with -Dclonos.coverage.write=true")
                .isEqualTo(generated);
    }

    private record Row(
            String vertex,
            boolean local,
            Optional<String> whyNotLocal,
            int restarted,
            int subtasks) {}

    private Row run(Shape shape) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARALLELISM);
        env.enableCheckpointing(200);
        shape.job().apply(env).sinkTo(new DiscardingSink<>()).name("sink");
        JobGraph jobGraph = env.getStreamGraph().getJobGraph();
        if (!shape.jobJar().isEmpty()) {
            Path jar = Files.createTempFile("coverage-job", ".jar");
            jar.toFile().deleteOnExit();
            JobJars.write(jar, shape.jobJar());
            jobGraph.addJar(new org.apache.flink.core.fs.Path(jar.toUri()));
        }
        String vertex = vertexUnderTest(jobGraph);
        Optional<String> whyNotReplayable = whyNotReplayable(jobGraph, vertex);

        JobID job = cluster.submitJob(jobGraph).get().getJobID();
        if (jobGraph.isCheckpointingEnabled()) {
            JobProgress.awaitCheckpoints(cluster, job, 1);
        } else {
            JobProgress.awaitRunning(cluster, job);
        }
        cluster.deliverCoordinationRequestToCoordinator(
                        job,
                        SchedulerEndpoint.OPERATOR_ID,
                        new SerializedValue<>(new FailTaskRequest(UNDER_TEST, 0)))
                .get(1, TimeUnit.MINUTES);
        assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess())
                .as("%s finished", shape.name())
                .isTrue();
        AccessExecutionGraph finished = cluster.getArchivedExecutionGraph(job).get();
        Set<String> restarted = Attempts.restarted(finished);
        assertThat(restarted).as("%s: the failed subtask restarted", shape.name()).isNotEmpty();
        boolean local = whyNotReplayable.isEmpty() && restarted.equals(Set.of(vertex + "[0]"));
        int subtasks = 0;
        for (AccessExecutionVertex ignored : finished.getAllExecutionVertices()) {
            subtasks++;
        }
        return new Row(vertex, local, whyNotReplayable, restarted.size(), subtasks);
    }

    /** The vertex that holds the operator under test. */
    private static String vertexUnderTest(JobGraph jobGraph) {
        for (JobVertex vertex : jobGraph.getVertices()) {
            if (vertex.getName().contains(UNDER_TEST)) {
                return vertex.getName();
            }
        }
        throw new AssertionError("no vertex holds " + UNDER_TEST);
    }

    /** Why the cluster-side rewriting marks the vertex as not replayable, as the cluster does. */
    private Optional<String> whyNotReplayable(JobGraph jobGraph, String vertexName)
            throws Exception {
        JobGraph rewritten = InstantiationUtil.clone(jobGraph, getClass().getClassLoader());
        new StreamTaskRewriter()
                .rewrite(
                        rewritten,
                        ClonosConfiguration.fromConfiguration(new Configuration()),
                        getClass().getClassLoader());
        for (JobVertex vertex : rewritten.getVertices()) {
            if (vertex.getName().equals(vertexName)) {
                return VertexReplay.whyUnlogged(vertex.getConfiguration())
                        .map(why -> "Clonos does not cover the job: " + why)
                        .or(() -> VertexReplay.whyNotReplayable(vertex.getConfiguration()));
            }
        }
        return Optional.empty();
    }

    // ------------------------------------------------------------------------------------------
    //  The shapes
    // ------------------------------------------------------------------------------------------

    private static final long COUNT = 3_000;

    private static List<Shape> shapes() {
        List<Shape> shapes = new ArrayList<>();
        shapes.add(
                new Shape(
                        "FLIP-27 source, one split per reader (DataGeneratorSource)",
                        env -> numbers(env, UNDER_TEST).map(new PlusOne()).name("map")));
        shapes.add(
                new Shape(
                        "FLIP-27 source, four splits per reader interleaved by its fetcher, two discovered late",
                        env ->
                                env.fromSource(
                                                new InterleavingSplitsSource(
                                                        COUNT, 4 * PARALLELISM, 2, 6_000_000L),
                                                WatermarkStrategy.noWatermarks(),
                                                UNDER_TEST)
                                        .map(new PlusOne())
                                        .name("map")));
        shapes.add(
                new Shape(
                        "Legacy SourceFunction (addSource)",
                        env ->
                                env.addSource(new LegacyNumbersSource(COUNT, 2_000))
                                        .name(UNDER_TEST)
                                        .map(new PlusOne())
                                        .name("map")));
        shapes.add(
                new Shape(
                        "Keyed process function with processing-time timers",
                        env ->
                                numbers(env, "source")
                                        .keyBy(new Modulo8())
                                        .process(new TimerPerRecord())
                                        .name(UNDER_TEST)));
        shapes.add(
                new Shape(
                        "Processing-time tumbling windows",
                        env ->
                                numbers(env, "source")
                                        .keyBy(new Modulo8())
                                        .window(
                                                TumblingProcessingTimeWindows.of(
                                                        Duration.ofMillis(100)))
                                        .reduce(new Sum())
                                        .name(UNDER_TEST)));
        shapes.add(
                new Shape(
                        "Union of two streams of one source (two input gates), then a shuffle",
                        env -> {
                            DataStream<Long> source = numbers(env, "source");
                            return source.filter(n -> n % 2 == 0)
                                    .union(source.filter(n -> n % 2 == 1))
                                    .keyBy(new Modulo8())
                                    .reduce(new Sum())
                                    .name(UNDER_TEST)
                                    // a consumer that checks what the recovered task sends again
                                    .keyBy(new Modulo8())
                                    .reduce(new Sum())
                                    .name("downstream");
                        }));
        shapes.add(
                new Shape(
                        "Broadcast state (connect with a broadcast stream)",
                        env -> {
                            MapStateDescriptor<Long, Long> rules =
                                    new MapStateDescriptor<>("rules", Types.LONG, Types.LONG);
                            return numbers(env, "source")
                                    .connect(numbers(env, "rules").broadcast(rules))
                                    .process(new LatestRule(rules))
                                    .name(UNDER_TEST);
                        }));
        shapes.add(
                new Shape(
                        "Operator with three keyed inputs (MultipleInputStreamTask)",
                        env ->
                                MultipleInputLinks.keyed(
                                        env,
                                        UNDER_TEST,
                                        tuples(env, "first"),
                                        tuples(env, "second"),
                                        tuples(env, "third"))));
        shapes.add(
                new Shape(
                        "Two sources chained to an operator of three inputs, the third from the network",
                        env ->
                                MultipleInputLinks.withChainedSources(
                                        env,
                                        UNDER_TEST,
                                        tuples(env, "first"),
                                        tuples(env, "second"),
                                        tuples(env, "third").rebalance())));
        shapes.add(
                new Shape(
                        "Async I/O, unordered, no retries",
                        env ->
                                AsyncDataStream.unorderedWait(
                                                numbers(env, "source"),
                                                new Increment(),
                                                10,
                                                TimeUnit.SECONDS)
                                        .name(UNDER_TEST)));
        shapes.add(
                new Shape(
                        "Async I/O with a retry strategy",
                        env ->
                                AsyncDataStream.unorderedWaitWithRetry(
                                                numbers(env, "source"),
                                                new Increment(),
                                                10,
                                                TimeUnit.SECONDS,
                                                new AsyncRetryStrategies
                                                                        .FixedDelayRetryStrategyBuilder<
                                                                Long>(3, 5)
                                                        .ifResult(
                                                                (java.util.function.Predicate<
                                                                                        java.util
                                                                                                        .Collection<
                                                                                                Long>>
                                                                                & java.io
                                                                                        .Serializable)
                                                                        java.util.Collection
                                                                                ::isEmpty)
                                                        .build())
                                        .name(UNDER_TEST)));
        shapes.add(
                new Shape(
                        "Timestamp assigner chained to a FLIP-27 source (periodic, bounded out-of-orderness), event-time tumbling windows",
                        env ->
                                windowed(
                                        numbers(env, UNDER_TEST)
                                                .assignTimestampsAndWatermarks(
                                                        outOfOrderness()
                                                                .withIdleness(
                                                                        Duration.ofSeconds(10)))
                                                .name("assigner"))));
        shapes.add(
                new Shape(
                        "Timestamp assigner behind a shuffle (its own task), event-time tumbling windows",
                        env ->
                                windowed(
                                        numbers(env, "source")
                                                .rebalance()
                                                .assignTimestampsAndWatermarks(outOfOrderness())
                                                .name(UNDER_TEST))));
        shapes.add(
                new Shape(
                        "Punctuated watermark generator (a watermark every 100th number)",
                        env ->
                                windowed(
                                        numbers(env, UNDER_TEST)
                                                .assignTimestampsAndWatermarks(
                                                        WatermarkStrategy.<Long>forGenerator(
                                                                        context ->
                                                                                new EveryHundredth())
                                                                .withTimestampAssigner(
                                                                        (n, previous) -> n))
                                                .name("assigner"))));
        shapes.add(
                new Shape(
                        "Assigner with idleness (withIdleness) over a stream with gaps",
                        env ->
                                windowed(
                                        numbers(env, UNDER_TEST)
                                                .filter(n -> n < 1_000 || n >= 2_000)
                                                .name("gaps")
                                                .assignTimestampsAndWatermarks(
                                                        outOfOrderness()
                                                                .withIdleness(
                                                                        Duration.ofMillis(100)))
                                                .name("assigner"))));
        shapes.add(
                new Shape(
                        "Event-time sliding windows with allowed lateness and a side output for late data",
                        env -> {
                            OutputTag<Long> late = new OutputTag<>("late", Types.LONG);
                            SingleOutputStreamOperator<Long> windows =
                                    eventTime(numbers(env, "source"))
                                            .keyBy(new Modulo8())
                                            .window(
                                                    SlidingEventTimeWindows.of(
                                                            Duration.ofMillis(200),
                                                            Duration.ofMillis(100)))
                                            .allowedLateness(Duration.ofMillis(50))
                                            .sideOutputLateData(late)
                                            .reduce(new Sum())
                                            .name(UNDER_TEST);
                            return windows.union(windows.getSideOutput(late));
                        }));
        shapes.add(
                new Shape(
                        "Event-time session windows",
                        env ->
                                eventTime(numbers(env, "source"))
                                        .keyBy(new Modulo8())
                                        .window(
                                                EventTimeSessionWindows.withGap(
                                                        Duration.ofMillis(5)))
                                        .reduce(new Sum())
                                        .name(UNDER_TEST)));
        shapes.add(
                new Shape(
                        "Side outputs of a process function",
                        env -> {
                            OutputTag<Long> odd = new OutputTag<>("odd", Types.LONG);
                            SingleOutputStreamOperator<Long> even =
                                    numbers(env, "source")
                                            .keyBy(new Modulo8())
                                            .process(new SplitOdd(odd))
                                            .name(UNDER_TEST);
                            return even.union(even.getSideOutput(odd));
                        }));
        shapes.add(
                new Shape(
                        "Keyed broadcast state (KeyedBroadcastProcessFunction)",
                        env -> {
                            MapStateDescriptor<Long, Long> rules =
                                    new MapStateDescriptor<>("rules", Types.LONG, Types.LONG);
                            return numbers(env, "source")
                                    .keyBy(new Modulo8())
                                    .connect(numbers(env, "rules").broadcast(rules))
                                    .process(new KeyedLatestRule(rules))
                                    .name(UNDER_TEST);
                        }));
        shapes.add(
                new Shape(
                        "Interval join of two event-time streams",
                        env ->
                                eventTime(numbers(env, "left"))
                                        .keyBy(new Modulo8())
                                        .intervalJoin(
                                                eventTime(numbers(env, "right"))
                                                        .keyBy(new Modulo8()))
                                        .between(Duration.ofMillis(-20), Duration.ofMillis(20))
                                        .process(new SumOfPair())
                                        .name(UNDER_TEST)));
        shapes.add(
                new Shape(
                        "Two FLIP-27 sources in a watermark alignment group (withWatermarkAlignment), event-time windows",
                        env ->
                                windowed(
                                        aligned(env, UNDER_TEST)
                                                .union(aligned(env, "other"))
                                                .map(new PlusOne())
                                                .name("map"))));
        shapes.add(
                new Shape(
                        "CEP pattern (CEP.pattern over a keyed event-time stream)",
                        env ->
                                CEP.pattern(
                                                eventTime(numbers(env, "source"))
                                                        .keyBy(new Modulo8()),
                                                Pattern.<Long>begin("low")
                                                        .where(SimpleCondition.of(n -> n % 16 < 8))
                                                        .next("high")
                                                        .where(
                                                                SimpleCondition.of(
                                                                        n -> n % 16 >= 8)))
                                        .process(new PairSum())
                                        .name(UNDER_TEST)));
        shapes.add(
                new Shape(
                        "Checkpoints at least once (CheckpointingMode.AT_LEAST_ONCE), keyed timers",
                        env -> {
                            env.getCheckpointConfig()
                                    .setCheckpointingConsistencyMode(
                                            org.apache.flink.core.execution.CheckpointingMode
                                                    .AT_LEAST_ONCE);
                            return numbers(env, "source")
                                    .keyBy(new Modulo8())
                                    .process(new TimerPerRecord())
                                    .name(UNDER_TEST);
                        }));
        shapes.add(
                new Shape(
                        "Unchanged user code that reads System.currentTimeMillis(), System.nanoTime() and Instant.now() and draws from new Random(), Math.random(), ThreadLocalRandom and UUID.randomUUID() (in the job's jar)",
                        env ->
                                numbers(env, "source")
                                        .map(n -> Tuple3.of(n % 8, "s:" + n, n))
                                        .returns(Types.TUPLE(Types.LONG, Types.STRING, Types.LONG))
                                        .keyBy(t -> t.f0)
                                        .process(new WallClockJob.Stamp())
                                        .name(UNDER_TEST),
                        List.of(WallClockJob.Stamp.class)));
        shapes.add(
                new Shape(
                        "A job without checkpointing (keyed timers)",
                        env -> {
                            env.getCheckpointConfig().disableCheckpointing();
                            return numbers(env, "source")
                                    .keyBy(new Modulo8())
                                    .process(new TimerPerRecord())
                                    .name(UNDER_TEST);
                        }));
        shapes.add(
                new Shape(
                        "DataStream iteration (iterate, checkpoints forced)",
                        CoverageITCase::iteration));
        shapes.addAll(sqlShapes());
        return shapes;
    }

    /**
     * Numbers halved in a loop until they reach 0: Flink runs an iteration with checkpoints only
     * when forced to, and its head ends a second after the last feedback.
     */
    @SuppressWarnings("deprecation")
    private static DataStream<Long> iteration(StreamExecutionEnvironment env) {
        env.enableCheckpointing(
                200, org.apache.flink.streaming.api.CheckpointingMode.EXACTLY_ONCE, true);
        IterativeStream<Long> loop = numbers(env, "source").iterate(1_000);
        DataStream<Long> halved = loop.map(n -> n / 2).name(UNDER_TEST);
        loop.closeWith(halved.filter(n -> n > 0));
        return halved;
    }

    /** The SQL statements people run, over datagen tables of event time. */
    private static List<Shape> sqlShapes() {
        List<Shape> shapes = new ArrayList<>();
        shapes.add(
                sql(
                        "SQL window TVF: TUMBLE aggregate",
                        "SELECT k, window_start, COUNT(*), SUM(id) FROM TABLE(TUMBLE(TABLE events,"
                                + " DESCRIPTOR(ts), INTERVAL '1' SECOND))"
                                + " GROUP BY k, window_start, window_end"));
        shapes.add(
                sql(
                        "SQL window TVF: HOP aggregate",
                        "SELECT k, window_start, COUNT(*) FROM TABLE(HOP(TABLE events,"
                                + " DESCRIPTOR(ts), INTERVAL '0.5' SECOND, INTERVAL '1' SECOND))"
                                + " GROUP BY k, window_start, window_end"));
        shapes.add(
                sql(
                        "SQL window TVF: CUMULATE aggregate",
                        "SELECT k, window_start, window_end, COUNT(*) FROM TABLE(CUMULATE(TABLE"
                                + " events, DESCRIPTOR(ts), INTERVAL '0.5' SECOND, INTERVAL '2'"
                                + " SECOND)) GROUP BY k, window_start, window_end"));
        shapes.add(
                sql(
                        "SQL GROUP BY with retractions (an aggregate of an aggregate)",
                        "SELECT c, COUNT(*) FROM (SELECT k, COUNT(*) AS c FROM events GROUP BY k)"
                                + " GROUP BY c"));
        shapes.add(
                sql(
                        "SQL GROUP BY with retractions, mini-batch on (table.exec.mini-batch.*)",
                        "SELECT c, COUNT(*) FROM (SELECT k, COUNT(*) AS c FROM events GROUP BY k)"
                                + " GROUP BY c",
                        Map.of(
                                "table.exec.mini-batch.enabled", "true",
                                "table.exec.mini-batch.allow-latency", "100 ms",
                                "table.exec.mini-batch.size", "100")));
        shapes.add(
                sql(
                        "SQL regular join",
                        "SELECT e.id, o.id FROM events e JOIN other o ON e.id = o.id"));
        shapes.add(
                sql(
                        "SQL interval join",
                        "SELECT e.id, o.id FROM events e, other o WHERE e.id = o.id"
                                + " AND e.ts BETWEEN o.ts - INTERVAL '1' SECOND"
                                + " AND o.ts + INTERVAL '1' SECOND"));
        shapes.add(
                sql(
                        "SQL deduplication (ROW_NUMBER, first row per key by event time)",
                        "SELECT k, id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k"
                                + " ORDER BY ts ASC) AS rn FROM events) WHERE rn = 1"));
        shapes.add(
                sql(
                        "SQL Top-N (ROW_NUMBER, three largest per key)",
                        "SELECT k, id, rn FROM (SELECT k, id, ROW_NUMBER() OVER (PARTITION BY k"
                                + " ORDER BY id DESC) AS rn FROM events) WHERE rn <= 3"));
        shapes.add(
                sql(
                        "SQL MATCH_RECOGNIZE",
                        "SELECT * FROM events MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts"
                                + " MEASURES A.id AS a, B.id AS b ONE ROW PER MATCH"
                                + " AFTER MATCH SKIP PAST LAST ROW PATTERN (A B)"
                                + " DEFINE A AS A.id % 16 < 8, B AS B.id % 16 >= 8)"));
        shapes.add(
                sql(
                        "SQL PROCTIME(), CURRENT_TIMESTAMP and NOW() in a projection and a filter",
                        "SELECT id, PROCTIME() AS p, CURRENT_TIMESTAMP AS c, NOW() AS n"
                                + " FROM events WHERE NOW() > TO_TIMESTAMP_LTZ(0, 3)"));
        return shapes;
    }

    private static Shape sql(String name, String query) {
        return sql(name, query, Map.of());
    }

    /**
     * A SQL statement over two datagen tables, {@code events} and {@code other} ({@link #COUNT}
     * rows at 1,000 a second each, {@code id} a sequence, {@code k = id % 8}, event time {@code ts}
     * ten milliseconds per row with a watermark 100 ms behind), its changelog into an operator
     * under test chained to the planner's last one.
     */
    private static Shape sql(String name, String query, Map<String, String> settings) {
        return new Shape(
                name,
                env -> {
                    StreamTableEnvironment tables = StreamTableEnvironment.create(env);
                    settings.forEach(tables.getConfig()::set);
                    for (String table : List.of("events", "other")) {
                        tables.executeSql(
                                "CREATE TABLE "
                                        + table
                                        + " (id BIGINT, k AS id % 8,"
                                        + " ts AS TO_TIMESTAMP_LTZ(id * 10, 3),"
                                        + " WATERMARK FOR ts AS ts - INTERVAL '0.1' SECOND)"
                                        + " WITH ('connector' = 'datagen',"
                                        + " 'rows-per-second' = '1000',"
                                        + " 'fields.id.kind' = 'sequence',"
                                        + " 'fields.id.start' = '1',"
                                        + " 'fields.id.end' = '"
                                        + COUNT
                                        + "')");
                    }
                    DataStream<org.apache.flink.types.Row> changes =
                            tables.toChangelogStream(tables.sqlQuery(query));
                    return changes.map(row -> row).returns(changes.getType()).name(UNDER_TEST);
                });
    }

    /** Numbers from a source of watermark alignment group "aligned". */
    private static DataStream<Long> aligned(StreamExecutionEnvironment env, String name) {
        return env.fromSource(
                new DataGeneratorSource<>(
                        new Identity(), COUNT, RateLimiterStrategy.perSecond(1_000), Types.LONG),
                outOfOrderness()
                        .withWatermarkAlignment(
                                "aligned", Duration.ofMillis(200), Duration.ofMillis(100)),
                name);
    }

    /** The sum of a matched pair. */
    private static final class PairSum extends PatternProcessFunction<Long, Long> {
        @Override
        public void processMatch(
                Map<String, List<Long>> match, Context context, Collector<Long> out) {
            out.collect(match.get("low").get(0) + match.get("high").get(0));
        }
    }

    /** Numbers as their own event time, out of order by up to 50 ms. */
    private static WatermarkStrategy<Long> outOfOrderness() {
        return WatermarkStrategy.<Long>forBoundedOutOfOrderness(Duration.ofMillis(50))
                .withTimestampAssigner((n, previous) -> n);
    }

    /** Numbers as their own event time, by a chained assigner. */
    private static DataStream<Long> eventTime(DataStream<Long> numbers) {
        return numbers.assignTimestampsAndWatermarks(outOfOrderness()).name("assigner");
    }

    /** Event-time tumbling windows of 100 ms, summing per key. */
    private static DataStream<Long> windowed(DataStream<Long> events) {
        return events.keyBy(new Modulo8())
                .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
                .reduce(new Sum())
                .name("windows");
    }

    /** A punctuated generator: a watermark at every 100th number, none periodically. */
    private static final class EveryHundredth implements WatermarkGenerator<Long> {
        @Override
        public void onEvent(Long n, long timestamp, WatermarkOutput output) {
            if (n % 100 == 0) {
                output.emitWatermark(new Watermark(timestamp - 1));
            }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {}
    }

    /** Even numbers to the main output, odd ones to a side output. */
    private static final class SplitOdd extends KeyedProcessFunction<Long, Long, Long> {
        private final OutputTag<Long> odd;

        SplitOdd(OutputTag<Long> odd) {
            this.odd = odd;
        }

        @Override
        public void processElement(Long n, Context context, Collector<Long> out) {
            if (n % 2 == 0) {
                out.collect(n);
            } else {
                context.output(odd, n);
            }
        }
    }

    /** {@code n} plus the latest broadcast number, if any. */
    private static long plusRule(
            org.apache.flink.api.common.state.ReadOnlyBroadcastState<Long, Long> rules, long n)
            throws Exception {
        Long rule = rules.get(0L);
        return n + (rule == null ? 0 : rule);
    }

    /** Adds the latest broadcast number to each number, keyed. */
    private static final class KeyedLatestRule
            extends KeyedBroadcastProcessFunction<Long, Long, Long, Long> {
        private final MapStateDescriptor<Long, Long> rules;

        KeyedLatestRule(MapStateDescriptor<Long, Long> rules) {
            this.rules = rules;
        }

        @Override
        public void processElement(Long n, ReadOnlyContext context, Collector<Long> out)
                throws Exception {
            out.collect(plusRule(context.getBroadcastState(rules), n));
        }

        @Override
        public void processBroadcastElement(Long rule, Context context, Collector<Long> out)
                throws Exception {
            context.getBroadcastState(rules).put(0L, rule);
        }
    }

    /** The sum of a joined pair. */
    private static final class SumOfPair extends ProcessJoinFunction<Long, Long, Long> {
        @Override
        public void processElement(Long left, Long right, Context context, Collector<Long> out) {
            out.collect(left + right);
        }
    }

    /** {@link #COUNT} (key, source name, number) tuples at 1,000 a second. */
    private static DataStream<Tuple3<Long, String, Long>> tuples(
            StreamExecutionEnvironment env, String name) {
        return env.fromSource(
                new DataGeneratorSource<>(
                        index -> Tuple3.of(index % 8, name, index),
                        COUNT,
                        RateLimiterStrategy.perSecond(1_000),
                        Types.TUPLE(Types.LONG, Types.STRING, Types.LONG)),
                WatermarkStrategy.noWatermarks(),
                name);
    }

    /** {@link #COUNT} numbers at 1,000 a second, from a source named {@code name}. */
    private static DataStream<Long> numbers(StreamExecutionEnvironment env, String name) {
        return env.fromSource(
                new DataGeneratorSource<>(
                        new Identity(), COUNT, RateLimiterStrategy.perSecond(1_000), Types.LONG),
                WatermarkStrategy.noWatermarks(),
                name);
    }

    private static final class Identity
            implements org.apache.flink.connector.datagen.source.GeneratorFunction<Long, Long> {
        @Override
        public Long map(Long n) {
            return n;
        }
    }

    private static final class PlusOne
            implements org.apache.flink.api.common.functions.MapFunction<Long, Long> {
        @Override
        public Long map(Long n) {
            return n + 1;
        }
    }

    private static final class Modulo8
            implements org.apache.flink.api.java.functions.KeySelector<Long, Long> {
        @Override
        public Long getKey(Long n) {
            return n % 8;
        }
    }

    private static final class Sum
            implements org.apache.flink.api.common.functions.ReduceFunction<Long> {
        @Override
        public Long reduce(Long a, Long b) {
            return a + b;
        }
    }

    /** Registers a processing-time timer per record, and emits at each firing. */
    private static final class TimerPerRecord extends KeyedProcessFunction<Long, Long, Long> {
        @Override
        public void processElement(Long n, Context context, Collector<Long> out) {
            long now = context.timerService().currentProcessingTime();
            context.timerService().registerProcessingTimeTimer(now + 20);
            out.collect(n);
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext context, Collector<Long> out) {
            out.collect(timestamp);
        }
    }

    /** Adds the latest broadcast number to each number. */
    private static final class LatestRule extends BroadcastProcessFunction<Long, Long, Long> {
        private final MapStateDescriptor<Long, Long> rules;

        LatestRule(MapStateDescriptor<Long, Long> rules) {
            this.rules = rules;
        }

        @Override
        public void open(OpenContext openContext) {}

        @Override
        public void processElement(Long n, ReadOnlyContext context, Collector<Long> out)
                throws Exception {
            out.collect(plusRule(context.getBroadcastState(rules), n));
        }

        @Override
        public void processBroadcastElement(Long rule, Context context, Collector<Long> out)
                throws Exception {
            context.getBroadcastState(rules).put(0L, rule);
        }
    }

    /** Completes each number plus one, at once. */
    private static final class Increment implements AsyncFunction<Long, Long> {
        @Override
        public void asyncInvoke(Long n, ResultFuture<Long> resultFuture) {
            resultFuture.complete(List.of(n + 1));
        }
    }
}
