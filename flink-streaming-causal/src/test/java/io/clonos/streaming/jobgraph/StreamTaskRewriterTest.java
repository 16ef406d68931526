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

package io.clonos.streaming.jobgraph;

import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.jobgraph.VertexReplay;
import io.clonos.streaming.operators.CausalAsyncWaitOperatorFactory;
import io.clonos.streaming.recovery.MultipleInputLinks;
import io.clonos.streaming.tasks.CausalMultipleInputStreamTask;
import io.clonos.streaming.tasks.CausalOneInputStreamTask;
import io.clonos.streaming.tasks.CausalSourceOperatorStreamTask;
import io.clonos.streaming.tasks.CausalSourceStreamTask;
import io.clonos.streaming.tasks.CausalTwoInputStreamTask;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.runtime.checkpoint.MasterTriggerRestoreHook;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.streaming.api.CheckpointingMode;
import org.apache.flink.streaming.api.checkpoint.ExternallyInducedSource;
import org.apache.flink.streaming.api.datastream.AsyncDataStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.async.AsyncFunction;
import org.apache.flink.streaming.api.functions.async.AsyncRetryStrategy;
import org.apache.flink.streaming.api.functions.async.ResultFuture;
import org.apache.flink.streaming.api.functions.co.CoMapFunction;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.functions.source.SourceFunction;
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.util.retryable.AsyncRetryStrategies;
import org.apache.flink.streaming.util.retryable.RetryPredicates;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

import static org.assertj.core.api.Assertions.assertThat;

class StreamTaskRewriterTest {

    private static final ClonosConfiguration CLONOS =
            ClonosConfiguration.fromConfiguration(new Configuration());

    @Test
    void everyStreamTaskBecomesItsCausalTaskAndCheckpointsAreAligned() {
        JobGraph jobGraph = jobWithEveryKindOfTask();

        new StreamTaskRewriter().rewrite(jobGraph, CLONOS, getClass().getClassLoader());

        assertThat(invokablesByVertexName(jobGraph))
                .containsEntry("Source: sequence", CausalSourceOperatorStreamTask.class.getName())
                .containsEntry("Source: legacy", CausalSourceStreamTask.class.getName())
                .containsEntry("tag", CausalOneInputStreamTask.class.getName())
                .containsEntry("join", CausalTwoInputStreamTask.class.getName())
                .containsEntry("Sink: discard", CausalOneInputStreamTask.class.getName());
        for (JobVertex vertex : jobGraph.getVertices()) {
            assertThat(new StreamConfig(vertex.getConfiguration()).isUnalignedCheckpointsEnabled())
                    .as("unaligned checkpoints of %s", vertex.getName())
                    .isFalse();
        }
    }

    @Test
    void tasksThatCannotReplayAreMarkedForAGlobalRollback() {
        JobGraph jobGraph = jobWithEveryKindOfTask();

        new StreamTaskRewriter().rewrite(jobGraph, CLONOS, getClass().getClassLoader());

        Map<String, Optional<String>> why =
                StreamSupport.stream(jobGraph.getVertices().spliterator(), false)
                        .collect(
                                Collectors.toMap(
                                        JobVertex::getName,
                                        v -> VertexReplay.whyNotReplayable(v.getConfiguration())));
        assertThat(why.get("Source: sequence")).isEmpty();
        assertThat(why.get("tag")).isEmpty();
        assertThat(why.get("Sink: discard")).isEmpty();
        assertThat(why.get("Source: legacy"))
                .as("its checkpoints' places among its records are logged")
                .isEmpty();
        assertThat(why.get("Source: inducing"))
                .hasValueSatisfying(
                        reason -> assertThat(reason).contains("ExternallyInducedSource"));
        assertThat(why.get("join")).as("two inputs, read a buffer at a time").isEmpty();
        assertThat(why.get("lookup")).as("Clonos's async operator replays").isEmpty();
        assertThat(why.get("retried lookup"))
                .as("Clonos's async operator retries and replays")
                .isEmpty();
    }

    @Test
    void noVertexOfAJobWithoutCheckpointsLogsAndEveryFailureIsFlinks() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.fromSequence(1, 10)
                .name("sequence")
                .rebalance()
                .map((MapFunction<Long, Long>) n -> n)
                .name("tag")
                .sinkTo(new org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink<>());
        JobGraph jobGraph = env.getStreamGraph().getJobGraph();

        new StreamTaskRewriter().rewrite(jobGraph, CLONOS, getClass().getClassLoader());

        for (JobVertex vertex : jobGraph.getVertices()) {
            assertThat(VertexReplay.whyUnlogged(vertex.getConfiguration()))
                    .as("%s", vertex.getName())
                    .hasValue("it does not checkpoint");
            assertThat(
                            vertex.getConfiguration()
                                    .get(
                                            io.clonos.runtime.configuration.ClonosOptions
                                                    .DETERMINANT_SHARING_DEPTH))
                    .as("%s logs no determinants", vertex.getName())
                    .isZero();
        }
    }

    @Test
    @SuppressWarnings("deprecation")
    void aJobWithAnIterationIsNotCoveredAndTheReasonNamesTheIteration() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        // Flink runs an iterative job with checkpoints only when forced to
        env.enableCheckpointing(1000, CheckpointingMode.EXACTLY_ONCE, true);
        org.apache.flink.streaming.api.datastream.IterativeStream<Long> loop =
                env.fromSequence(1, 10).name("sequence").iterate();
        DataStream<Long> halved = loop.map((MapFunction<Long, Long>) n -> n / 2).name("halve");
        loop.closeWith(halved.filter(n -> n > 0));
        halved.sinkTo(new org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink<>());
        JobGraph jobGraph = env.getStreamGraph().getJobGraph();

        new StreamTaskRewriter().rewrite(jobGraph, CLONOS, getClass().getClassLoader());

        assertThat(jobGraph.getVertices()).hasSizeGreaterThan(2);
        for (JobVertex vertex : jobGraph.getVertices()) {
            assertThat(VertexReplay.whyUnlogged(vertex.getConfiguration()))
                    .as("%s", vertex.getName())
                    .hasValueSatisfying(
                            why ->
                                    assertThat(why)
                                            .contains("DataStream iteration", "feedback edge"));
        }
    }

    /**
     * A multiple-input task replays as a two-input task does, with network inputs only and with
     * sources chained to it alike.
     */
    @Test
    void multipleInputTasksReplayWithAndWithoutChainedSources() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(1000, CheckpointingMode.EXACTLY_ONCE);
        MultipleInputLinks.keyed(env, "keyed multi", tuples(env, "a"), tuples(env, "b"))
                .sinkTo(new org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink<>())
                .name("discard keyed");
        MultipleInputLinks.withChainedSources(
                        env, "chained multi", tuples(env, "c"), tuples(env, "d").rebalance())
                .sinkTo(new org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink<>())
                .name("discard chained");
        JobGraph jobGraph = env.getStreamGraph().getJobGraph();
        List<OperatorIDPair> flinks =
                List.copyOf(vertexNamed(jobGraph, "chained multi").getOperatorIDs());

        new StreamTaskRewriter().rewrite(jobGraph, CLONOS, getClass().getClassLoader());

        JobVertex keyed = vertexNamed(jobGraph, "keyed multi");
        JobVertex chained = vertexNamed(jobGraph, "chained multi");
        // Flink leaves the chained source out of the vertex's operators, so its state would never
        // reach a checkpoint; the chain's end and head keep their places
        List<OperatorIDPair> operators = chained.getOperatorIDs();
        assertThat(operators).hasSize(flinks.size() + 1).containsAll(flinks);
        assertThat(operators.get(0)).isEqualTo(flinks.get(0));
        assertThat(operators.get(operators.size() - 1)).isEqualTo(flinks.get(flinks.size() - 1));
        StreamConfig source =
                new StreamConfig(chained.getConfiguration())
                                .getTransitiveChainedTaskConfigs(getClass().getClassLoader())
                                .values()
                                .stream()
                                .filter(config -> config.getOperatorName().matches("(Source: )?c"))
                                .findFirst()
                                .orElseThrow();
        assertThat(operators.stream().map(OperatorIDPair::getGeneratedOperatorID))
                .contains(source.getOperatorID());
        assertThat(chained.getName()).as("the source is chained").contains("Source: c");
        assertThat(keyed.getInvokableClassName())
                .isEqualTo(CausalMultipleInputStreamTask.class.getName());
        assertThat(chained.getInvokableClassName())
                .isEqualTo(CausalMultipleInputStreamTask.class.getName());
        assertThat(VertexReplay.whyNotReplayable(keyed.getConfiguration())).isEmpty();
        assertThat(VertexReplay.whyNotReplayable(chained.getConfiguration())).isEmpty();
    }

    private static DataStream<Tuple3<Long, String, Long>> tuples(
            StreamExecutionEnvironment env, String name) {
        return env.fromSource(
                new DataGeneratorSource<>(
                        index -> Tuple3.of(index % 4, name, index),
                        10,
                        Types.TUPLE(Types.LONG, Types.STRING, Types.LONG)),
                WatermarkStrategy.noWatermarks(),
                name);
    }

    @Test
    void asyncOperatorsBecomeReplayableWhetherTheyRetryOrNot() {
        JobGraph jobGraph = jobWithEveryKindOfTask();

        new StreamTaskRewriter().rewrite(jobGraph, CLONOS, getClass().getClassLoader());

        assertThat(headFactory(jobGraph, "lookup")).isEqualTo(CausalAsyncWaitOperatorFactory.class);
        assertThat(headFactory(jobGraph, "retried lookup"))
                .isEqualTo(CausalAsyncWaitOperatorFactory.class);
    }

    @Test
    void aRetryingAsyncOperatorChainedToASourceIsReplacedAndReplayable() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(1000);
        AsyncRetryStrategy<Long> retries =
                new AsyncRetryStrategies.FixedDelayRetryStrategyBuilder<Long>(3, 10)
                        .ifResult(RetryPredicates.EMPTY_RESULT_PREDICATE)
                        .build();
        AsyncDataStream.unorderedWaitWithRetry(
                        env.fromSequence(1, 10).name("sequence"),
                        new Lookup(),
                        1,
                        TimeUnit.SECONDS,
                        retries)
                .name("retried lookup")
                .addSink(new DiscardingSink<>())
                .name("discard");
        JobGraph jobGraph = env.getStreamGraph().getJobGraph();

        new StreamTaskRewriter().rewrite(jobGraph, CLONOS, getClass().getClassLoader());

        JobVertex chain = vertexNamed(jobGraph, "retried lookup");
        Map<String, Class<?>> factories = chainedFactories(chain);
        assertThat(factories).containsEntry("retried lookup", CausalAsyncWaitOperatorFactory.class);
        assertThat(VertexReplay.whyNotReplayable(chain.getConfiguration())).isEmpty();
    }

    @Test
    void chainedAsyncOperatorsAreReplacedToo() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(1000);
        DataStream<Long> numbers =
                env.fromSequence(1, 10)
                        .name("sequence")
                        .rebalance()
                        .map((MapFunction<Long, Long>) n -> n)
                        .name("tag");
        AsyncDataStream.unorderedWait(numbers, new Lookup(), 1, TimeUnit.SECONDS)
                .name("lookup")
                .addSink(new DiscardingSink<>())
                .name("discard");
        JobGraph jobGraph = env.getStreamGraph().getJobGraph();

        new StreamTaskRewriter().rewrite(jobGraph, CLONOS, getClass().getClassLoader());

        JobVertex chain = vertexNamed(jobGraph, "lookup");
        Map<String, Class<?>> factories = chainedFactories(chain);
        assertThat(factories).containsEntry("lookup", CausalAsyncWaitOperatorFactory.class);
        assertThat(VertexReplay.whyNotReplayable(chain.getConfiguration())).isEmpty();
    }

    /** The first vertex whose name contains {@code name}. */
    private static JobVertex vertexNamed(JobGraph jobGraph, String name) {
        return StreamSupport.stream(jobGraph.getVertices().spliterator(), false)
                .filter(v -> v.getName().contains(name))
                .findFirst()
                .orElseThrow();
    }

    /** The operator factory class of each operator chained in {@code vertex}, by name. */
    private Map<String, Class<?>> chainedFactories(JobVertex vertex) {
        return new StreamConfig(vertex.getConfiguration())
                        .getTransitiveChainedTaskConfigsWithSelf(getClass().getClassLoader())
                        .values()
                        .stream()
                        .collect(
                                Collectors.toMap(
                                        StreamConfig::getOperatorName,
                                        c ->
                                                c.getStreamOperatorFactoryClass(
                                                        getClass().getClassLoader())));
    }

    private static Class<?> headFactory(JobGraph jobGraph, String vertexName) {
        JobVertex vertex =
                StreamSupport.stream(jobGraph.getVertices().spliterator(), false)
                        .filter(v -> v.getName().equals(vertexName))
                        .findFirst()
                        .orElseThrow();
        return new StreamConfig(vertex.getConfiguration())
                .getStreamOperatorFactoryClass(StreamTaskRewriterTest.class.getClassLoader());
    }

    @Test
    void rewritingTwiceChangesNothingMore() {
        JobGraph jobGraph = jobWithEveryKindOfTask();
        StreamTaskRewriter rewriter = new StreamTaskRewriter();

        rewriter.rewrite(jobGraph, CLONOS, getClass().getClassLoader());
        Map<String, String> once = invokablesByVertexName(jobGraph);
        rewriter.rewrite(jobGraph, CLONOS, getClass().getClassLoader());

        assertThat(invokablesByVertexName(jobGraph)).isEqualTo(once);
    }

    private static JobGraph jobWithEveryKindOfTask() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(1000, CheckpointingMode.EXACTLY_ONCE);
        env.getCheckpointConfig().enableUnalignedCheckpoints();
        env.disableOperatorChaining();
        DataStream<Long> numbers = env.fromSequence(1, 10).name("sequence");
        DataStream<Long> legacy = env.addSource(new OneNumber()).name("legacy");
        env.addSource(new Inducing())
                .name("inducing")
                .addSink(new DiscardingSink<>())
                .name("inducing sink");
        DataStream<Long> tagged =
                numbers.rebalance().map((MapFunction<Long, Long>) n -> n).name("tag");
        DataStream<Long> joined = tagged.connect(legacy).map(new Identity()).name("join");
        DataStream<Long> looked =
                AsyncDataStream.orderedWait(joined, new Lookup(), 1, TimeUnit.SECONDS)
                        .name("lookup");
        AsyncRetryStrategy<Long> retries =
                new AsyncRetryStrategies.FixedDelayRetryStrategyBuilder<Long>(3, 10)
                        .ifException(RetryPredicates.HAS_EXCEPTION_PREDICATE)
                        .build();
        AsyncDataStream.orderedWaitWithRetry(looked, new Lookup(), 1, TimeUnit.SECONDS, 10, retries)
                .name("retried lookup")
                .addSink(new DiscardingSink<>())
                .name("discard");
        return env.getStreamGraph().getJobGraph();
    }

    private static Map<String, String> invokablesByVertexName(JobGraph jobGraph) {
        return StreamSupport.stream(jobGraph.getVertices().spliterator(), false)
                .collect(Collectors.toMap(JobVertex::getName, JobVertex::getInvokableClassName));
    }

    private static final class OneNumber implements SourceFunction<Long> {
        @Override
        public void run(SourceContext<Long> ctx) {
            ctx.collect(1L);
        }

        @Override
        public void cancel() {}
    }

    /** A legacy source that triggers its own checkpoints. */
    private static final class Inducing implements ExternallyInducedSource<Long, Long> {
        @Override
        public void run(SourceContext<Long> ctx) {}

        @Override
        public void cancel() {}

        @Override
        public void setCheckpointTrigger(CheckpointTrigger checkpointTrigger) {}

        @Override
        public MasterTriggerRestoreHook<Long> createMasterTriggerRestoreHook() {
            return null;
        }
    }

    private static final class Lookup implements AsyncFunction<Long, Long> {
        @Override
        public void asyncInvoke(Long input, ResultFuture<Long> resultFuture) {
            resultFuture.complete(List.of(input));
        }
    }

    private static final class Identity implements CoMapFunction<Long, Long, Long> {
        @Override
        public Long map1(Long value) {
            return value;
        }

        @Override
        public Long map2(Long value) {
            return value;
        }
    }
}
