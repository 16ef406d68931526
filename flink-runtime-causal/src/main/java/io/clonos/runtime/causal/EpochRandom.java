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
package io.clonos.runtime.causal;

import org.apache.flink.annotation.Internal;

import javax.annotation.Nullable;

import java.security.SecureRandom;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A {@link Random} whose seed is a determinant, drawn anew in every epoch of its task: its numbers
 * on the task thread are the same in a replay, and no single number needs logging. A draw that a
 * replay does not make again (on another thread, or in code the task runs {@link
 * CausalTask#outsideTheLog}) comes from a generator of its own, so that it does not move the logged
 * sequence: the task thread's next numbers would differ in the replay, unnoticed. Without causal
 * logging it is an ordinary random generator.
 */
@Internal
public final class EpochRandom extends Random {

    private static final long serialVersionUID = 1L;

    @Nullable private final transient CausalTask task;
    private final SecureRandom seeds = new SecureRandom();
    private long seededEpoch = Long.MIN_VALUE;

    public EpochRandom(@Nullable CausalTask task) {
        this.task = task;
    }

    @Override
    protected int next(int bits) {
        if (task != null && !task.isProcessing()) {
            return ThreadLocalRandom.current().nextInt() >>> (32 - bits);
        }
        if (task != null) {
            long epoch = task.log().currentEpoch();
            if (epoch != seededEpoch) {
                seededEpoch = epoch;
                setSeed(
                        task.decide(
                                        Determinant.RandomSeed.class,
                                        () -> new Determinant.RandomSeed(seeds.nextLong()))
                                .seed());
            }
        }
        return super.next(bits);
    }

    /**
     * Random keeps the second of each pair of gaussians for the next call: drawn outside the log,
     * the pair would hand its second to a logged draw, or take one from it.
     */
    @Override
    public synchronized double nextGaussian() {
        if (task != null && !task.isProcessing()) {
            return ThreadLocalRandom.current().nextGaussian();
        }
        return super.nextGaussian();
    }
}
