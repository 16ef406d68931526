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

package io.clonos.beam;

import org.apache.beam.runners.flink.ClonosBeamPatch;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineRunner;
import org.apache.beam.sdk.io.Read;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.io.kafka.KafkaIO;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.LongSerializer;
import org.joda.time.Duration;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * (In this module, which has Beam's Kafka connector on its class path as the Nexmark harness needs
 * it; in ClonosRunner's package, whose rewrite it looks at.)
 *
 * <p>What ClonosRunner rewrites of Beam's Kafka connector before Beam's Flink runner translates the
 * pipeline, and that Beam makes ClonosRunner, not another runner, however often it asks.
 */
class ReplayableKafkaIOTest {

    @Test
    void kafkaReadsAreSplitPerPartitionAndTheExactlyOnceSinkDrawsCausalShards() {
        Pipeline pipeline = kafkaToKafka(PipelineOptionsFactory.create());
        assertThat(sources(pipeline)).containsExactly("KafkaUnboundedSource");
        assertThat(shardSteps(pipeline)).containsExactly("Reshard");

        ReplayableKafkaIO.apply(pipeline);

        assertThat(sources(pipeline)).containsExactly("SplitPerPartitionSource");
        assertThat(shardSteps(pipeline)).containsExactly("CausalReshard");
    }

    @Test
    void theShardCountIsTheSinks() {
        assertThat(
                        composites(kafkaToKafka(PipelineOptionsFactory.create())).stream()
                                .map(node -> ReplayableKafkaIO.shardsOf(node.getTransform()))
                                .filter(shards -> shards > 0))
                .containsExactly(3);
    }

    /**
     * A random-key reshuffle's key step is Beam's, which starts from {@code ThreadLocalRandom},
     * until ClonosRunner rewrites it into one that draws from the causal random numbers, with the
     * same bucket count.
     */
    @Test
    void aRandomKeyReshuffleDrawsItsKeysFromTheCausalRandomNumbers() {
        Pipeline pipeline = Pipeline.create(PipelineOptionsFactory.create());
        pipeline.apply(Create.of(1, 2, 3))
                .apply("Spread", Reshuffle.<Integer>viaRandomKey().withNumBuckets(5));
        assertThat(keySteps(pipeline)).containsExactly("AssignShardFn");

        ReplayableReshuffle.apply(pipeline);
        assertThat(keySteps(pipeline)).containsExactly("CausalRandomKey");
        assertThat(
                        composites(pipeline).stream()
                                .filter(node -> node.getTransform() instanceof ParDo.SingleOutput)
                                .map(
                                        node ->
                                                ((ParDo.SingleOutput<?, ?>) node.getTransform())
                                                        .getFn())
                                .filter(fn -> fn instanceof CausalRandomKey)
                                .map(fn -> ((CausalRandomKey<?>) fn).buckets()))
                .containsExactly(5);
    }

    /** The simple class names of the functions of the pipeline's random-key steps. */
    private static List<String> keySteps(Pipeline pipeline) {
        return composites(pipeline).stream()
                .filter(node -> node.getTransform() instanceof ParDo.SingleOutput)
                .map(node -> ((ParDo.SingleOutput<?, ?>) node.getTransform()).getFn())
                .filter(
                        fn ->
                                fn instanceof Reshuffle.AssignShardFn
                                        || fn instanceof CausalRandomKey)
                .map(fn -> fn.getClass().getSimpleName())
                .collect(Collectors.toList());
    }

    /**
     * Beam makes a runner from the options when the pipeline is created and again when it runs;
     * once ClonosRunner named the patch as the runner, both are ClonosRunners, and the runner's
     * class is in the package Beam's Kafka sink accepts exactly-once writes from.
     */
    @Test
    void everyRunnerBeamMakesFromTheOptionsIsClonosRunner() {
        PipelineOptions options =
                PipelineOptionsFactory.fromArgs("--runner=ClonosRunner", "--streaming=true")
                        .create();
        assertThat(PipelineRunner.fromOptions(options)).isInstanceOf(ClonosRunner.class);
        assertThat(options.getRunner().getName()).startsWith("org.apache.beam.runners.flink.");
        assertThat(PipelineRunner.fromOptions(options)).isInstanceOf(ClonosRunner.class);
        assertThat(options.getRunner()).isEqualTo(ClonosBeamPatch.class);
    }

    /**
     * A read that stamps its records with processing time (KafkaIO's default) leaves them to the
     * causal clock in a step after the source; a read stamped from its records keeps its stamps.
     */
    @Test
    void aProcessingTimeReadIsStampedByTheCausalClockAfterTheSource() {
        Pipeline processingTime = kafkaToKafka(PipelineOptionsFactory.create());
        ReplayableKafkaIO.apply(processingTime);
        assertThat(stampSteps(processingTime)).containsExactly("CausalProcessingTime");
        assertThat(stampedAfterTheSource(processingTime)).containsExactly(true);

        Pipeline createTime = Pipeline.create(PipelineOptionsFactory.create());
        createTime.apply(longs().withCreateTime(Duration.standardSeconds(1)).withoutMetadata());
        ReplayableKafkaIO.apply(createTime);
        assertThat(stampSteps(createTime)).isEmpty();
        assertThat(stampedAfterTheSource(createTime)).containsExactly(false);
    }

    private static List<String> stampSteps(Pipeline pipeline) {
        return composites(pipeline).stream()
                .filter(node -> node.getTransform() instanceof ParDo.SingleOutput)
                .map(node -> ((ParDo.SingleOutput<?, ?>) node.getTransform()).getFn())
                .filter(fn -> fn instanceof CausalProcessingTime)
                .map(fn -> fn.getClass().getSimpleName())
                .collect(Collectors.toList());
    }

    private static List<Boolean> stampedAfterTheSource(Pipeline pipeline) {
        return unboundedSources(pipeline).stream()
                .map(source -> ((SplitPerPartitionSource<?, ?>) source).stampedAfterTheSource())
                .collect(Collectors.toList());
    }

    /** Read by ClonosRunner to have the causal clock stamp what the reader would. */
    @Test
    void aKafkaReadWithWallClockTimestampsIsRecognised() throws Exception {
        KafkaIO.Read<Long, Long> read = longs();
        assertThat(ClonosBeamPatch.stampsWithWallClock(sourceOf(read))).isTrue();
        assertThat(
                        ClonosBeamPatch.stampsWithWallClock(
                                sourceOf(read.withCreateTime(Duration.standardSeconds(1)))))
                .isFalse();
        assertThat(ClonosBeamPatch.stampsWithWallClock(sourceOf(read.withLogAppendTime())))
                .isFalse();
    }

    private static Object sourceOf(KafkaIO.Read<Long, Long> read) {
        Pipeline pipeline = Pipeline.create(PipelineOptionsFactory.create());
        pipeline.apply(read.withoutMetadata());
        List<UnboundedSource<?, ?>> sources = unboundedSources(pipeline);
        assertThat(sources).hasSize(1);
        return sources.get(0);
    }

    /** A read of topic "in" as KafkaIO makes it: stamped with processing time. */
    private static KafkaIO.Read<Long, Long> longs() {
        return KafkaIO.<Long, Long>read()
                .withBootstrapServers("localhost:9092")
                .withTopic("in")
                .withKeyDeserializer(LongDeserializer.class)
                .withValueDeserializer(LongDeserializer.class);
    }

    private static Pipeline kafkaToKafka(PipelineOptions options) {
        Pipeline pipeline = Pipeline.create(options);
        pipeline.apply(longs().withoutMetadata())
                .apply(
                        KafkaIO.<Long, Long>write()
                                .withBootstrapServers("localhost:9092")
                                .withTopic("out")
                                .withKeySerializer(LongSerializer.class)
                                .withValueSerializer(LongSerializer.class)
                                .withEOS(3, "group"));
        return pipeline;
    }

    /** The simple class names of the pipeline's unbounded sources. */
    private static List<String> sources(Pipeline pipeline) {
        return unboundedSources(pipeline).stream()
                .map(source -> source.getClass().getSimpleName())
                .collect(Collectors.toList());
    }

    private static List<UnboundedSource<?, ?>> unboundedSources(Pipeline pipeline) {
        return composites(pipeline).stream()
                .filter(node -> node.getTransform() instanceof Read.Unbounded)
                .<UnboundedSource<?, ?>>map(
                        node -> ((Read.Unbounded<?>) node.getTransform()).getSource())
                .collect(Collectors.toList());
    }

    /** The simple class names of the functions of the exactly-once sink's shard steps. */
    private static List<String> shardSteps(Pipeline pipeline) {
        return composites(pipeline).stream()
                .filter(node -> node.getTransform() instanceof ParDo.SingleOutput)
                .filter(node -> node.getFullName().contains("Shuffle across"))
                .map(
                        node ->
                                ((ParDo.SingleOutput<?, ?>) node.getTransform())
                                        .getFn()
                                        .getClass()
                                        .getSimpleName())
                .collect(Collectors.toList());
    }

    /** The pipeline's composite transforms, outermost first. */
    private static List<TransformHierarchy.Node> composites(Pipeline pipeline) {
        List<TransformHierarchy.Node> composites = new ArrayList<>();
        pipeline.traverseTopologically(
                new Pipeline.PipelineVisitor.Defaults() {
                    @Override
                    public CompositeBehavior enterCompositeTransform(TransformHierarchy.Node node) {
                        if (node.getTransform() != null) {
                            composites.add(node);
                        }
                        return CompositeBehavior.ENTER_TRANSFORM;
                    }
                });
        return composites;
    }
}
