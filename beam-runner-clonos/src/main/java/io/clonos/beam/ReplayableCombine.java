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
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.CombineFnBase.GlobalCombineFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.util.construction.PTransformReplacements;
import org.apache.beam.sdk.util.construction.ReplacementOutputs;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TupleTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;

/**
 * Rewrites every {@code Combine.perKeyWithFanout(...)} into the {@code Combine.perKey(...)} of the
 * same function and side inputs: the same results, without the hot-key fan-out. Beam's fan-out
 * sends a hot key's values to a sub-key drawn from {@code ThreadLocalRandom} at each bundle's
 * start, which a recovered task draws anew: its records would go elsewhere than its predecessor's,
 * and the recovery would fall back to a global rollback. The function and side inputs are private
 * fields of Beam's transform ({@link ClonosBeamPatch}); should a later Beam keep them elsewhere,
 * the transform is left as Beam made it and a warning says so.
 */
@Internal
final class ReplayableCombine {

    private static final Logger LOG = LoggerFactory.getLogger(ReplayableCombine.class);

    private ReplayableCombine() {}

    static void apply(Pipeline pipeline) {
        pipeline.replaceAll(
                List.of(
                        PTransformOverride.of(
                                application -> isReplaceable(application.getTransform()),
                                new PerKeyFactory<>())));
    }

    static boolean isReplaceable(PTransform<?, ?> transform) {
        if (!(transform instanceof Combine.PerKeyWithHotKeyFanout)) {
            return false;
        }
        try {
            ClonosBeamPatch.fanoutCombineFn(transform);
            ClonosBeamPatch.fanoutSideInputs(transform);
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn(
                    "Beam's Combine.perKeyWithFanout has no function where Clonos looks for it: its fan-out stays Beam's, which draws sub-keys a recovered task cannot reproduce, so a failure of it rolls back globally.",
                    e);
            return false;
        }
    }

    private static final class PerKeyFactory<K, InputT, OutputT>
            implements PTransformOverrideFactory<
                    PCollection<KV<K, InputT>>,
                    PCollection<KV<K, OutputT>>,
                    Combine.PerKeyWithHotKeyFanout<K, InputT, OutputT>> {

        @Override
        @SuppressWarnings("unchecked")
        public PTransformReplacement<PCollection<KV<K, InputT>>, PCollection<KV<K, OutputT>>>
                getReplacementTransform(
                        AppliedPTransform<
                                        PCollection<KV<K, InputT>>,
                                        PCollection<KV<K, OutputT>>,
                                        Combine.PerKeyWithHotKeyFanout<K, InputT, OutputT>>
                                application) {
            GlobalCombineFn<? super InputT, ?, OutputT> fn;
            List<PCollectionView<?>> sideInputs;
            try {
                fn =
                        (GlobalCombineFn<? super InputT, ?, OutputT>)
                                ClonosBeamPatch.fanoutCombineFn(application.getTransform());
                sideInputs = ClonosBeamPatch.fanoutSideInputs(application.getTransform());
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("Checked by isReplaceable", e);
            }
            Coder<KV<K, OutputT>> coder =
                    PTransformReplacements.getSingletonMainOutput(application).getCoder();
            LOG.info(
                    "{} combines per key without Beam's hot-key fan-out, whose random sub-keys a recovered task could not reproduce.",
                    application.getFullName());
            return PTransformReplacement.of(
                    PTransformReplacements.getSingletonMainInput(application),
                    new PTransform<PCollection<KV<K, InputT>>, PCollection<KV<K, OutputT>>>() {
                        @Override
                        public PCollection<KV<K, OutputT>> expand(
                                PCollection<KV<K, InputT>> input) {
                            Combine.PerKey<K, InputT, OutputT> combine = Combine.perKey(fn);
                            if (!sideInputs.isEmpty()) {
                                combine = combine.withSideInputs(sideInputs);
                            }
                            return input.apply("Combine.perKey", combine).setCoder(coder);
                        }
                    });
        }

        @Override
        public Map<PCollection<?>, ReplacementOutput> mapOutputs(
                Map<TupleTag<?>, PCollection<?>> outputs, PCollection<KV<K, OutputT>> newOutput) {
            return ReplacementOutputs.singleton(outputs, newOutput);
        }
    }
}
