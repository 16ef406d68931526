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

package io.clonos.runtime.usercode;

import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.EpochRandom;

import org.apache.flink.annotation.Internal;

import javax.annotation.Nullable;

import java.util.Random;

/**
 * What user code's {@code new Random()} creates instead ({@link UserCodeRewriter}): drawn on a
 * Clonos task's thread, its numbers come from a generator of its own whose seed the task logs once
 * per epoch ({@link EpochRandom}), so that a recovered task draws its predecessor's numbers; drawn
 * elsewhere, it is Java's. {@code new Random(seed)} is already deterministic and stays Java's.
 */
@Internal
public final class CausalRandom extends Random {

    private static final long serialVersionUID = 1L;

    private final boolean seeded;

    /** The task's generator for this one, once drawn on a task's thread. */
    @Nullable private transient EpochRandom causal;

    public CausalRandom() {
        this.seeded = false;
    }

    public CausalRandom(long seed) {
        super(seed);
        this.seeded = true;
    }

    @Override
    protected int next(int bits) {
        if (!seeded) {
            CausalTask task = CausalTask.ofCurrentThread();
            if (task != null && task.isProcessing()) {
                if (causal == null) {
                    causal = new EpochRandom(task);
                }
                return causal.nextInt() >>> (32 - bits);
            }
        }
        return super.next(bits);
    }
}
