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

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/** Which checkpoint aborts reach Flink's task, and when. */
class HeldAbortsTest {

    private final EpochTracker epochs = EpochTracker.startingAt(12);
    private final HeldAborts aborts = new HeldAborts(epochs);
    private final List<String> toldFlink = new ArrayList<>();

    private void abort(long checkpointId, long latestCompleted) {
        aborts.aborted(
                checkpointId,
                latestCompleted,
                (id, completed) -> {
                    toldFlink.add("abort " + id + " (completed " + completed + ")");
                    return CompletableFuture.completedFuture(null);
                },
                id -> {
                    toldFlink.add("complete " + id);
                    return CompletableFuture.completedFuture(null);
                });
    }

    private void enter(long epoch) {
        epochs.startEpoch(epoch);
        aborts.entered(epoch);
    }

    @Test
    void anAbortOfACheckpointTheTaskHasNotPassedWaitsUntilItHas() {
        abort(13, 12);
        assertThat(toldFlink)
                .as("the completion is told at once, the abort held")
                .containsExactly("complete 12");
        assertThat(aborts.heldBack()).containsExactly(13L);

        enter(13);
        assertThat(aborts.heldBack())
                .as("the task is in the checkpoint's epoch, not past its barrier for sure")
                .containsExactly(13L);

        enter(14);
        assertThat(toldFlink).containsExactly("complete 12", "abort 13 (completed 0)");
        assertThat(aborts.heldBack()).isEmpty();
    }

    @Test
    void anAbortOfAPassedCheckpointReachesFlinkAtOnce() {
        enter(15);
        abort(14, 13);
        assertThat(toldFlink).containsExactly("abort 14 (completed 13)");
        assertThat(aborts.heldBack()).isEmpty();
    }

    @Test
    void aCheckpointTheTaskNeverTookIsToldWhenALaterOneStarts() {
        abort(13, 0);
        abort(14, 0);
        assertThat(toldFlink).isEmpty();
        enter(16);
        assertThat(toldFlink).containsExactly("abort 13 (completed 0)", "abort 14 (completed 0)");
    }

    /**
     * A task that finishes drains its mailbox closed (at the end of input), and a checkpoint it
     * starts then releases the aborts it held: Flink's mailbox rejects them, and they are dropped,
     * as Flink's Task drops a notification its mailbox rejects, instead of failing the task.
     */
    @Test
    void aHeldAbortThatTheClosedMailboxRejectsIsDropped() {
        for (long checkpoint = 13; checkpoint <= 14; checkpoint++) {
            aborts.aborted(
                    checkpoint,
                    12,
                    (id, completed) -> {
                        toldFlink.add("rejected " + id);
                        throw new java.util.concurrent.RejectedExecutionException("closed");
                    },
                    id -> CompletableFuture.completedFuture(null));
        }
        enter(15);
        assertThat(toldFlink).containsExactly("rejected 13", "rejected 14");
        assertThat(aborts.heldBack()).isEmpty();
    }
}
