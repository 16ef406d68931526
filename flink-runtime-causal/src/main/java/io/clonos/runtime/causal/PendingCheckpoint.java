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

/**
 * The checkpoint a task took last, and whether it is still pending as far as the task heard:
 * whether waiting for it can free determinant memory ({@link DeterminantMemory}), its completion
 * truncating every older epoch. Written on the task thread (epochs) and on the RPC thread
 * (outcomes); read by any thread, since memory is released on other threads: fields are volatile.
 *
 * <p>An attempt after the first hears of a checkpoint only if the checkpoint counted it. After a
 * local recovery the rest of the job ran on, and the barriers the attempt passes first may belong
 * to checkpoints triggered before it ran (replayed by upstream in-flight logs, or still on their
 * way), which the coordinator aborted at the failover without counting the new attempt: nobody
 * would tell it that they ended, and waiting for one would stop the task until a later checkpoint,
 * which needs the task, timed out. Such an attempt therefore counts a checkpoint as pending only
 * once it heard how some checkpoint ended: that one counted it, and so does every newer one (the
 * coordinator plans checkpoints in the order of their ids, each only while all tasks run). After a
 * global restart nothing is stale, but the rule costs only the wait until a checkpoint ends.
 */
@Internal
final class PendingCheckpoint {

    private volatile long taken;
    private volatile long completedUpTo;
    private volatile long abortedUpTo = Long.MIN_VALUE;
    private volatile boolean countedInNewCheckpoints = true;

    /** A task restored from {@code restored} (or starting at it): nothing is pending. */
    PendingCheckpoint(long restored) {
        this.taken = restored;
        this.completedUpTo = restored;
    }

    /** This attempt is not the task's first: see the class comment. */
    void replacedAFailedAttempt() {
        countedInNewCheckpoints = false;
    }

    void taken(long checkpointId) {
        taken = Math.max(taken, checkpointId);
    }

    void completed(long checkpointId) {
        completedUpTo = Math.max(completedUpTo, checkpointId);
        countedInNewCheckpoints = true;
    }

    void aborted(long checkpointId) {
        abortedUpTo = Math.max(abortedUpTo, checkpointId);
        countedInNewCheckpoints = true;
    }

    /** Whether the checkpoint taken last is neither completed nor aborted, and will be heard of. */
    boolean isPending() {
        long pending = taken;
        return countedInNewCheckpoints && pending > completedUpTo && pending > abortedUpTo;
    }
}
