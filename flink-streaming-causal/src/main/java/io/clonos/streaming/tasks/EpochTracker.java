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

package io.clonos.streaming.tasks;

import org.apache.flink.annotation.Internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The epoch a task is in. An epoch is the interval between two checkpoints and its id is the
 * checkpoint id: a task enters epoch n when it starts checkpoint n, just before it forwards the
 * barrier, and a task restored from checkpoint n starts in epoch n. Every Clonos log is segmented
 * by this id.
 *
 * <p>The current epoch is published as the task metric {@code clonos.epoch}, so anyone can see over
 * Flink's REST metrics API that a job runs on Clonos tasks and how far they are.
 */
@Internal
public final class EpochTracker {

    /** The metric group under which Clonos registers its task metrics. */
    public static final String METRIC_GROUP = "clonos";

    public static final String EPOCH_METRIC = "epoch";

    private final AtomicLong epoch;

    private EpochTracker(long initialEpoch) {
        this.epoch = new AtomicLong(initialEpoch);
    }

    public static EpochTracker startingAt(long epoch) {
        return new EpochTracker(epoch);
    }

    /**
     * Enters the epoch of a checkpoint the task starts. Epochs only move forward: a checkpoint
     * trigger that arrives late (a subsumed checkpoint) does not take the task back.
     */
    public void startEpoch(long checkpointId) {
        epoch.accumulateAndGet(checkpointId, Math::max);
    }

    public long currentEpoch() {
        return epoch.get();
    }
}
