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

package io.clonos.runtime.network;

import org.apache.flink.annotation.Internal;

import java.util.BitSet;
import java.util.concurrent.CompletableFuture;

/**
 * Which channels of a gate have read their producer's in-flight log replay to its end ({@link
 * ReplayCaughtUpEvent}).
 *
 * <p>Why: a restarted task finds, on every channel of a producer that kept running, the producer's
 * output since the restored checkpoint and during the task's downtime. A checkpoint's barrier from
 * such a producer reaches the task only behind that backlog, and the task's aligned barriers from
 * its other channels (a restarted producer's, which come at once) hold those channels meanwhile:
 * the restarted producer stops, and with it every consumer it feeds. A JobManager that holds
 * checkpoints back for a recovery ({@code clonos.recovery.checkpoint-pause}) waits until the
 * restarted tasks' inputs caught up. A channel counts once: a replacement connection later replays
 * only a restarted producer's own, short log.
 *
 * <p>The task thread only, but for the future.
 */
@Internal
final class InputCatchUp {

    private final int numberOfChannels;

    private final BitSet caughtUp = new BitSet();

    private final CompletableFuture<Void> allCaughtUp = new CompletableFuture<>();

    InputCatchUp(int numberOfChannels) {
        this.numberOfChannels = numberOfChannels;
        if (numberOfChannels == 0) {
            allCaughtUp.complete(null);
        }
    }

    /** The channel's connection replayed the producer's in-flight log to its end. */
    void caughtUp(int channel) {
        if (caughtUp.get(channel)) {
            return;
        }
        caughtUp.set(channel);
        if (caughtUp.cardinality() == numberOfChannels) {
            allCaughtUp.complete(null);
        }
    }

    /** Completes once every channel caught up. */
    CompletableFuture<Void> allCaughtUp() {
        return allCaughtUp;
    }
}
