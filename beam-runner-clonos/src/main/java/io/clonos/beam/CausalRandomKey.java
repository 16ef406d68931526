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

import io.clonos.streaming.causal.CausalServices;

import org.apache.flink.annotation.Internal;

import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.values.KV;

import javax.annotation.Nullable;

/**
 * The key step of Beam's {@code Reshuffle.viaRandomKey()}, made replayable. Beam's own ({@code
 * Reshuffle.AssignShardFn}) draws a first key from {@code ThreadLocalRandom} when it is set up and
 * counts up from it; a recovered worker draws another, so its records go to other consumers than
 * its predecessor's did and the recovery falls back to a global rollback. This one draws each
 * record's key from the task's causal random numbers, which a recovered task draws again in the
 * same order; the records spread as evenly, over {@code buckets} keys if Beam's step had a count.
 */
@Internal
final class CausalRandomKey<T> extends DoFn<T, KV<Integer, T>> {

    private static final long serialVersionUID = 1L;

    @Nullable private final Integer buckets;

    private transient CausalServices causal;

    CausalRandomKey(@Nullable Integer buckets) {
        if (buckets != null && buckets <= 0) {
            throw new IllegalArgumentException(
                    "A reshuffle needs at least one bucket, not " + buckets);
        }
        this.buckets = buckets;
    }

    @Nullable
    Integer buckets() {
        return buckets;
    }

    @ProcessElement
    public void processElement(@Element T element, OutputReceiver<KV<Integer, T>> out) {
        if (causal == null) {
            // where the function runs: the task's thread
            causal = CausalServices.ofTaskThread();
        }
        int key = buckets == null ? causal.random().nextInt() : causal.random().nextInt(buckets);
        out.output(KV.of(key, element));
    }
}
