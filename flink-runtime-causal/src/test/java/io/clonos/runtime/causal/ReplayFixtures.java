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

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A task's log read back, and a recovery handed a predecessor's log: for tests of a task's replay.
 */
public final class ReplayFixtures {

    public static final CausalLogId LOG = CausalLogId.main("vertex", 0);

    private ReplayFixtures() {}

    /** A task that runs normally (recovers nothing) and has started processing. */
    public static CausalTask running(TaskCausalLog log, int inputChannels) {
        CausalTask task =
                new CausalTask(
                        log, CausalRecovery.notRecovering("task", LOG), inputChannels, 1, -1);
        task.processingStarted();
        return task;
    }

    /** The determinants {@code task} logged in {@code epoch}. */
    public static List<Determinant> logged(CausalTask task, long epoch) {
        List<Determinant> determinants = new ArrayList<>();
        task.log()
                .deltasSince(new TaskCausalLog.Position())
                .forEach(
                        delta -> {
                            if (delta.epoch() == epoch) {
                                try {
                                    determinants.addAll(DeterminantEncoding.decode(delta.bytes()));
                                } catch (CorruptCausalLogException e) {
                                    throw new AssertionError(e);
                                }
                            }
                        });
        return determinants;
    }

    /** Every byte of {@code log}, its epochs one after the other. */
    static byte[] bytes(TaskCausalLog log) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (CausalLogDelta delta : log.deltasSince(new TaskCausalLog.Position())) {
            out.writeBytes(delta.bytes());
        }
        return out.toByteArray();
    }

    /** A task restored from epoch 5 whose one consumer handed back {@code predecessor}'s log. */
    public static CausalRecovery replaying(TaskCausalLog predecessor) {
        List<SharedDelta> deltas = new ArrayList<>();
        predecessor
                .deltasSince(new TaskCausalLog.Position())
                .forEach(delta -> deltas.add(new SharedDelta(delta, 1)));
        CausalRecovery recovery =
                CausalRecovery.recovering(
                        "task", LOG, 5, 1, Duration.ofMinutes(1), TestDeadlines.INSTANCE);
        recovery.consumerConnected(0);
        recovery.determinantsReceived(0, deltas, () -> {});
        return recovery;
    }

    /** As {@link #replaying(TaskCausalLog)}, the predecessor having logged these in epoch 5. */
    public static CausalRecovery replaying(Determinant... predecessorLog) {
        TaskCausalLog predecessor = new TaskCausalLog(LOG, 5);
        for (Determinant determinant : predecessorLog) {
            predecessor.append(determinant);
        }
        return replaying(predecessor);
    }
}
