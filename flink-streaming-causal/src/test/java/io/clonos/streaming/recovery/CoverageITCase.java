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
import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.jobgraph.VertexReplay;
import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.scheduler.FailTaskRequest;
import io.clonos.streaming.jobgraph.StreamTaskRewriter;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.ClusterOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.streaming.api.datastream.AsyncDataStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.async.AsyncFunction;
import org.apache.flink.streaming.api.functions.async.ResultFuture;
import org.apache.flink.streaming.api.functions.co.BroadcastProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.source.SourceFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.util.retryable.AsyncRetryStrategies;
import org.apache.flink.util.Collector;
import org.apache.flink.util.InstantiationUtil;
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
import java.util.HashSet;
import java.util.List;
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

    /** A job shape: the row's name, and the job, whose operator under test is named so. */
    private record Shape(String name, Function<StreamExecutionEnvironment, DataStream<?>> job) {}

    @BeforeAll
    void startCluster() throws Exception {
        Configuration config = new Configuration();
        config.set(RestOptions.BIND_PORT, "0");
        config.set(ClusterOptions.EVENLY_SPREAD_OUT_SLOTS_STRATEGY, true);
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 5);
        config.set(
                RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        config.setString("clonos.recovery.reconnect-timeout", "10 s");
        cluster = ClonosMiniCluster.create(config, 2, 4);
        cluster.start();
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
                .append(
                        "A global row's vertex is named in a warning when the job is submitted.\n\n")
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
                    .append(row.vertex())
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
        String vertex = vertexUnderTest(jobGraph);
        Optional<String> whyNotReplayable = whyNotReplayable(jobGraph, vertex);

        JobID job = cluster.submitJob(jobGraph).get().getJobID();
        awaitCheckpoint(job);
        cluster.deliverCoordinationRequestToCoordinator(
                        job,
                        FailTaskRequest.TARGET,
                        new SerializedValue<>(new FailTaskRequest(UNDER_TEST, 0)))
                .get(1, TimeUnit.MINUTES);
        assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess())
                .as("%s finished", shape.name())
                .isTrue();
        AccessExecutionGraph finished = cluster.getArchivedExecutionGraph(job).get();
        Set<String> restarted = restartedSubtasks(finished);
        assertThat(restarted).as("%s: the failed subtask restarted", shape.name()).isNotEmpty();
        boolean local = whyNotReplayable.isEmpty() && restarted.equals(Set.of(vertex + "[0]"));
        int subtasks = 0;
        for (AccessExecutionVertex ignored : finished.getAllExecutionVertices()) {
            subtasks++;
        }
        return new Row(vertex, local, whyNotReplayable, restarted.size(), subtasks);
    }

    private void awaitCheckpoint(JobID job) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (System.nanoTime() < deadline) {
            AccessExecutionGraph graph = cluster.getExecutionGraph(job).get();
            if (graph.getCheckpointStatsSnapshot() != null
                    && graph.getCheckpointStatsSnapshot()
                                    .getCounts()
                                    .getNumberOfCompletedCheckpoints()
                            > 0) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no checkpoint of job " + job + " completed within a minute");
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
                return VertexReplay.whyNotReplayable(vertex.getConfiguration());
            }
        }
        return Optional.empty();
    }

    /** The subtasks that restarted, as "vertex name[subtask index]". */
    private static Set<String> restartedSubtasks(AccessExecutionGraph graph) {
        Set<String> restarted = new HashSet<>();
        for (AccessExecutionVertex vertex : graph.getAllExecutionVertices()) {
            if (vertex.getCurrentExecutionAttempt().getAttemptNumber() > 0) {
                String name = vertex.getTaskNameWithSubtaskIndex();
                restarted.add(
                        name.substring(0, name.lastIndexOf(" ("))
                                + "["
                                + vertex.getParallelSubtaskIndex()
                                + "]");
            }
        }
        return restarted;
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
                                env.addSource(new LegacyNumbers())
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
        return shapes;
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

    /** {@link #COUNT} numbers, from a thread of the source's own, with pauses. */
    private static final class LegacyNumbers implements SourceFunction<Long> {
        private volatile boolean running = true;

        @Override
        public void run(SourceContext<Long> context) throws Exception {
            for (long n = 0; n < COUNT / PARALLELISM && running; n++) {
                synchronized (context.getCheckpointLock()) {
                    context.collect(n);
                }
                Thread.sleep(1);
            }
        }

        @Override
        public void cancel() {
            running = false;
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
            Long rule = context.getBroadcastState(rules).get(0L);
            out.collect(n + (rule == null ? 0 : rule));
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
