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

import javax.annotation.Nullable;

/**
 * Where a recovering task runs its predecessor's mailbox actions: each logged timer firing, source
 * checkpoint, async result and watermark is pinned to the number of stream elements the task had
 * processed in its epoch, and fires when the replay reaches that number. On the task thread.
 */
final class MailboxActionReplay {

    private final CausalTask task;
    private final CausalRecovery recovery;
    private final TaskCausalLog log;
    private final AsyncResults asyncResults;
    private final CausalWatermarks watermarks;

    /** Without a source's own replayer (a task that cannot emit a barrier): the epoch moves on. */
    private CheckpointReplayer checkpoints;

    private TimerReplayer timers =
            timer -> {
                throw new LocalRecoveryImpossibleException(
                        "The task has no timer service to replay " + timer);
            };

    MailboxActionReplay(
            CausalTask task,
            CausalRecovery recovery,
            TaskCausalLog log,
            AsyncResults asyncResults,
            CausalWatermarks watermarks) {
        this.task = task;
        this.recovery = recovery;
        this.log = log;
        this.asyncResults = asyncResults;
        this.watermarks = watermarks;
        this.checkpoints = checkpoint -> task.epochStarted(checkpoint.checkpointId());
    }

    void setTimerReplayer(TimerReplayer timers) {
        this.timers = timers;
    }

    void setCheckpointReplayer(CheckpointReplayer checkpoints) {
        this.checkpoints = checkpoints;
    }

    /** Fires everything that is due at this point ({@link CausalTask#fireDueTimers}). */
    void fireDue() {
        while (fireNextDue()) {
            // keep firing what is due at this point
        }
    }

    /** Fires the next action if one is due ({@link CausalTask#fireNextDue}). */
    boolean fireNextDue() {
        Determinant action = nextMailboxAction();
        if (action == null || !isDue(action, recordCountOf(action))) {
            return false;
        }
        // claimed before its determinant is taken: taking the last one ends the replay
        Runnable timerFiring =
                action instanceof Determinant.TimerFired timer ? timers.claim(timer) : null;
        Determinant taken = recovery.next(action.getClass());
        if (taken instanceof Determinant.AsyncCompletion completion) {
            task.newTick();
            asyncResults.replay(completion);
            return true;
        }
        log.append(taken);
        if (timerFiring != null) {
            task.newTick();
            timerFiring.run();
        } else if (action instanceof Determinant.SourceCheckpoint checkpoint) {
            // the source took this checkpoint here; its consumers read the barrier here, and a
            // consumer that recovers too replays its input with the barrier in that place
            task.newTick();
            checkpoints.replay(checkpoint);
        } else if (!watermarks.replay(action)) {
            throw new IllegalStateException("Not a mailbox action: " + taken);
        }
        return true;
    }

    /** Whether a logged mailbox action is due now ({@link CausalTask#timerDue}). */
    boolean isAnyDue() {
        Determinant action = nextMailboxAction();
        return action != null && recordCountOf(action) == task.elementsInEpoch();
    }

    /** The next determinant to replay if it is a mailbox action pinned to a record offset. */
    @Nullable
    private Determinant nextMailboxAction() {
        Determinant next = recovery.peek(Determinant.class);
        return next instanceof Determinant.TimerFired
                        || next instanceof Determinant.SourceCheckpoint
                        || next instanceof Determinant.AsyncCompletion
                        || next instanceof Determinant.Watermark
                        || next instanceof Determinant.WatermarkStatus
                        || next instanceof Determinant.InputWatermarks
                ? next
                : null;
    }

    private static long recordCountOf(Determinant action) {
        if (action instanceof Determinant.TimerFired timer) {
            return timer.recordCount();
        }
        if (action instanceof Determinant.SourceCheckpoint checkpoint) {
            return checkpoint.recordCount();
        }
        if (action instanceof Determinant.Watermark watermark) {
            return watermark.recordCount();
        }
        if (action instanceof Determinant.WatermarkStatus status) {
            return status.recordCount();
        }
        if (action instanceof Determinant.InputWatermarks) {
            return 0;
        }
        return ((Determinant.AsyncCompletion) action).recordCount();
    }

    private boolean isDue(Determinant determinant, long recordCount) {
        long elements = task.elementsInEpoch();
        if (recordCount < elements) {
            throw new LocalRecoveryImpossibleException(
                    "The replay passed " + determinant + " (at element " + elements + ")");
        }
        return recordCount == elements;
    }
}
