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

import javax.annotation.concurrent.GuardedBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;

/**
 * Holds back the JobManager's abort of a checkpoint the task has not passed yet. Told of such an
 * abort, Flink's task sends a {@code CancelCheckpointMarker} downstream in place of the barrier
 * when it gets there. When the notification arrives is up to an RPC, and Flink addresses it to a
 * vertex's current attempt, so it also reaches the new attempt of a recovering task whose
 * predecessor was in that checkpoint: the contents of the task's output would depend on a choice
 * that no determinant records, and a recovered task (or a recovering consumer replaying the barrier
 * its predecessor read there) would not reproduce it. Held back, the abort reaches Flink once the
 * task entered a later epoch; the task has then taken the checkpoint (or never will), and Flink
 * only cancels what is left of it and tells the operators. The price is the snapshot of an aborted
 * checkpoint.
 *
 * <p>Called from the RPC thread that delivers the abort and from the thread that starts an epoch.
 */
@Internal
final class HeldAborts {

    /** Tells Flink's task of an abort, as {@code StreamTask#notifyCheckpointAbortAsync}. */
    interface Flink {
        Future<Void> abort(long checkpointId, long latestCompletedCheckpointId);
    }

    /** Tells Flink's task of a completed checkpoint, as {@code notifyCheckpointCompleteAsync}. */
    interface FlinkCompletion {
        Future<Void> complete(long checkpointId);
    }

    private final EpochTracker epochs;

    @GuardedBy("this")
    private final TreeMap<Long, Flink> held = new TreeMap<>();

    HeldAborts(EpochTracker epochs) {
        this.epochs = epochs;
    }

    /**
     * Checkpoint {@code checkpointId} was aborted; Flink names the latest completed checkpoint with
     * it. Flink's task hears of the abort now if the task is past the checkpoint, otherwise once it
     * is; of the completion, now.
     */
    Future<Void> aborted(
            long checkpointId,
            long latestCompletedCheckpointId,
            Flink abort,
            FlinkCompletion completion) {
        boolean passed;
        synchronized (this) {
            passed = checkpointId < epochs.currentEpoch();
            if (!passed) {
                held.put(checkpointId, abort);
            }
        }
        if (passed) {
            return abort.abort(checkpointId, latestCompletedCheckpointId);
        }
        return latestCompletedCheckpointId > 0
                ? completion.complete(latestCompletedCheckpointId)
                : CompletableFuture.completedFuture(null);
    }

    /**
     * The task entered epoch {@code epoch} (after the tracker moved on): the aborts of earlier
     * checkpoints it held reach Flink.
     */
    void entered(long epoch) {
        List<Map.Entry<Long, Flink>> due;
        synchronized (this) {
            SortedMap<Long, Flink> earlier = held.headMap(epoch);
            due = new ArrayList<>(earlier.entrySet());
            earlier.clear();
        }
        for (Map.Entry<Long, Flink> abort : due) {
            try {
                abort.getValue().abort(abort.getKey(), 0);
            } catch (RejectedExecutionException closed) {
                // the task finishes (its mailbox is closed, as while it drains at the end of
                // input): Flink's Task drops a notification its mailbox rejects too
            }
        }
    }

    /** For tests: the checkpoints whose abort is held back. */
    synchronized List<Long> heldBack() {
        return new ArrayList<>(held.keySet());
    }
}
