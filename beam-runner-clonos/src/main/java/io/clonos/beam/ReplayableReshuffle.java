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
import org.apache.beam.sdk.runners.AppliedPTransform;
import org.apache.beam.sdk.runners.PTransformOverride;
import org.apache.beam.sdk.runners.PTransformOverrideFactory;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.apache.beam.sdk.util.construction.PTransformReplacements;
import org.apache.beam.sdk.util.construction.ReplacementOutputs;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TupleTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;

/**
 * Rewrites the key step of every {@code Reshuffle.viaRandomKey()} into {@link CausalRandomKey}, so
 * that a recovered task sends its records where its predecessor did. Beam's bucket count is read
 * from the step's private field ({@link ClonosBeamPatch}); should a later Beam keep it elsewhere,
 * the step is left as Beam made it and a warning says so: the job runs, and a failure that the step
 * makes irreproducible rolls back globally, as without Clonos.
 */
@Internal
final class ReplayableReshuffle {

    private static final Logger LOG = LoggerFactory.getLogger(ReplayableReshuffle.class);

    private ReplayableReshuffle() {}

    static void apply(Pipeline pipeline) {
        pipeline.replaceAll(
                List.of(
                        PTransformOverride.of(
                                application -> isRandomKey(application.getTransform()),
                                new RandomKeyFactory<>())));
    }

    static boolean isRandomKey(PTransform<?, ?> transform) {
        if (!(transform instanceof ParDo.SingleOutput<?, ?> parDo)
                || !(parDo.getFn() instanceof Reshuffle.AssignShardFn<?>)) {
            return false;
        }
        try {
            ClonosBeamPatch.reshuffleBuckets(parDo.getFn());
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn(
                    "Beam's Reshuffle.viaRandomKey() has no bucket count where Clonos looks for it: its key step stays Beam's, which a recovered task cannot reproduce, so a failure of it rolls back globally.",
                    e);
            return false;
        }
    }

    private static final class RandomKeyFactory<T>
            implements PTransformOverrideFactory<
                    PCollection<T>,
                    PCollection<KV<Integer, T>>,
                    ParDo.SingleOutput<T, KV<Integer, T>>> {

        @Override
        public PTransformReplacement<PCollection<T>, PCollection<KV<Integer, T>>>
                getReplacementTransform(
                        AppliedPTransform<
                                        PCollection<T>,
                                        PCollection<KV<Integer, T>>,
                                        ParDo.SingleOutput<T, KV<Integer, T>>>
                                application) {
            Integer buckets;
            try {
                buckets = ClonosBeamPatch.reshuffleBuckets(application.getTransform().getFn());
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("Checked by isRandomKey", e);
            }
            Coder<KV<Integer, T>> coder =
                    PTransformReplacements.getSingletonMainOutput(application).getCoder();
            LOG.info(
                    "{} draws each record's key from the task's causal random numbers.",
                    application.getFullName());
            return PTransformReplacement.of(
                    PTransformReplacements.getSingletonMainInput(application),
                    new PTransform<PCollection<T>, PCollection<KV<Integer, T>>>() {
                        @Override
                        public PCollection<KV<Integer, T>> expand(PCollection<T> input) {
                            return input.apply(ParDo.of(new CausalRandomKey<T>(buckets)))
                                    .setCoder(coder);
                        }
                    });
        }

        @Override
        public Map<PCollection<?>, ReplacementOutput> mapOutputs(
                Map<TupleTag<?>, PCollection<?>> outputs, PCollection<KV<Integer, T>> newOutput) {
            return ReplacementOutputs.singleton(outputs, newOutput);
        }
    }
}
