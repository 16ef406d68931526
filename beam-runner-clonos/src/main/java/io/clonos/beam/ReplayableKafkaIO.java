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

import org.apache.flink.annotation.Internal;

import org.apache.beam.runners.flink.ClonosBeamPatch;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.io.Read;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.runners.AppliedPTransform;
import org.apache.beam.sdk.runners.PTransformOverride;
import org.apache.beam.sdk.runners.PTransformOverrideFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.util.construction.PTransformReplacements;
import org.apache.beam.sdk.util.construction.ReplacementOutputs;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.TupleTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;

/**
 * Rewrites the places of Beam's Kafka connector that a recovered task could not reproduce, so that
 * a pipeline reading and writing Kafka recovers locally, unchanged:
 *
 * <ul>
 *   <li>a Kafka read is split one partition per split ({@link SplitPerPartitionSource}), and a read
 *       that stamps with processing time is stamped by the causal clock instead ({@link
 *       CausalProcessingTime});
 *   <li>the exactly-once sink's shard step draws its shards from the causal random numbers ({@link
 *       CausalReshard}).
 * </ul>
 *
 * <p>Both Beam classes are package-private: they are recognised by name, and the sink's shard count
 * is read from its private field ({@link ClonosBeamPatch}). Should a later Beam rename them, the
 * step is left as Beam made it and a warning says so; the job still runs, and a failure that the
 * step makes irreproducible rolls back globally, as without Clonos.
 */
@Internal
final class ReplayableKafkaIO {

    private static final Logger LOG = LoggerFactory.getLogger(ReplayableKafkaIO.class);

    static final String KAFKA_SOURCE = "org.apache.beam.sdk.io.kafka.KafkaUnboundedSource";

    private ReplayableKafkaIO() {}

    /** Rewrites the pipeline's Kafka reads and exactly-once Kafka writes. */
    static void apply(Pipeline pipeline) {
        pipeline.replaceAll(
                List.of(
                        PTransformOverride.of(
                                application -> isKafkaRead(application.getTransform()),
                                new SplitReadFactory<>()),
                        PTransformOverride.of(
                                application -> shardsOf(application.getTransform()) > 0,
                                new ReshardFactory<>())));
    }

    static boolean isKafkaRead(PTransform<?, ?> transform) {
        return transform instanceof Read.Unbounded
                && ((Read.Unbounded<?>) transform)
                        .getSource()
                        .getClass()
                        .getName()
                        .equals(KAFKA_SOURCE);
    }

    /** The shard count of Beam's exactly-once sink's shard step; 0 if not that step. */
    static int shardsOf(PTransform<?, ?> transform) {
        if (!(transform instanceof ParDo.SingleOutput)) {
            return 0;
        }
        DoFn<?, ?> fn = ((ParDo.SingleOutput<?, ?>) transform).getFn();
        if (!fn.getClass().getName().equals(ClonosBeamPatch.EOS_RESHARD)) {
            return 0;
        }
        try {
            return ClonosBeamPatch.exactlyOnceShards(fn);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn(
                    "Beam's exactly-once Kafka sink has no shard count where Clonos looks for it ({}): its shard step stays Beam's, which a recovered task cannot reproduce, so a failure of it rolls back globally.",
                    ClonosBeamPatch.EOS_RESHARD,
                    e);
            return 0;
        }
    }

    private static final class SplitReadFactory<T>
            implements PTransformOverrideFactory<PBegin, PCollection<T>, Read.Unbounded<T>> {

        @Override
        public PTransformReplacement<PBegin, PCollection<T>> getReplacementTransform(
                AppliedPTransform<PBegin, PCollection<T>, Read.Unbounded<T>> application) {
            UnboundedSource<T, ?> source = application.getTransform().getSource();
            LOG.info(
                    "{} reads one Kafka partition per split, so that their order is logged.",
                    application.getFullName());
            if (!stampsWithWallClock(application.getFullName(), source)) {
                return PTransformReplacement.of(
                        application.getPipeline().begin(),
                        Read.from(splitPerPartition(source, false)));
            }
            LOG.info(
                    "{} stamps its records with processing time (KafkaIO's default): the task's causal clock stamps each as it leaves the source, so that a recovered reader's records get their predecessor's times.",
                    application.getFullName());
            Coder<T> coder = source.getOutputCoder();
            return PTransformReplacement.of(
                    application.getPipeline().begin(),
                    new PTransform<PBegin, PCollection<T>>() {
                        @Override
                        public PCollection<T> expand(PBegin begin) {
                            return begin.apply("Read", Read.from(splitPerPartition(source, true)))
                                    .apply(
                                            "Stamp processing time",
                                            ParDo.of(new CausalProcessingTime<T>()))
                                    .setCoder(coder);
                        }
                    });
        }

        private static boolean stampsWithWallClock(String read, UnboundedSource<?, ?> source) {
            try {
                return ClonosBeamPatch.stampsWithWallClock(source);
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                LOG.warn(
                        "Cannot tell how {} stamps its records (Beam keeps its timestamp policy elsewhere): its records keep the read's stamps, and if that is processing time (KafkaIO's default), a failure of it or of a task after it rolls the job back globally.",
                        read,
                        e);
                return false;
            }
        }

        private static <T, M extends UnboundedSource.CheckpointMark>
                UnboundedSource<T, M> splitPerPartition(
                        UnboundedSource<T, M> source, boolean stampedAfterTheSource) {
            return new SplitPerPartitionSource<>(source, stampedAfterTheSource);
        }

        @Override
        public Map<PCollection<?>, ReplacementOutput> mapOutputs(
                Map<TupleTag<?>, PCollection<?>> outputs, PCollection<T> newOutput) {
            return ReplacementOutputs.singleton(outputs, newOutput);
        }
    }

    private static final class ReshardFactory<T>
            implements PTransformOverrideFactory<
                    PCollection<T>,
                    PCollection<KV<Integer, TimestampedValue<T>>>,
                    ParDo.SingleOutput<T, KV<Integer, TimestampedValue<T>>>> {

        @Override
        public PTransformReplacement<PCollection<T>, PCollection<KV<Integer, TimestampedValue<T>>>>
                getReplacementTransform(
                        AppliedPTransform<
                                        PCollection<T>,
                                        PCollection<KV<Integer, TimestampedValue<T>>>,
                                        ParDo.SingleOutput<T, KV<Integer, TimestampedValue<T>>>>
                                application) {
            int shards = shardsOf(application.getTransform());
            PCollection<KV<Integer, TimestampedValue<T>>> original =
                    PTransformReplacements.getSingletonMainOutput(application);
            Coder<KV<Integer, TimestampedValue<T>>> coder = original.getCoder();
            LOG.info(
                    "{} draws each record's shard of {} from the task's causal random numbers.",
                    application.getFullName(),
                    shards);
            return PTransformReplacement.of(
                    PTransformReplacements.getSingletonMainInput(application),
                    new PTransform<
                            PCollection<T>, PCollection<KV<Integer, TimestampedValue<T>>>>() {
                        @Override
                        public PCollection<KV<Integer, TimestampedValue<T>>> expand(
                                PCollection<T> input) {
                            return input.apply(ParDo.of(new CausalReshard<T>(shards)))
                                    .setCoder(coder);
                        }
                    });
        }

        @Override
        public Map<PCollection<?>, ReplacementOutput> mapOutputs(
                Map<TupleTag<?>, PCollection<?>> outputs,
                PCollection<KV<Integer, TimestampedValue<T>>> newOutput) {
            return ReplacementOutputs.singleton(outputs, newOutput);
        }
    }
}
