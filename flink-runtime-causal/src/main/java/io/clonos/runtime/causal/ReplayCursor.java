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

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The predecessor's determinants a recovering task replays, per epoch, and how far the replay got
 * (task thread only).
 *
 * <p>A logged run ({@link Determinant.Run}: ticks of the clock, records of one split) is handed out
 * whole as its first, so that the recovered task logs it as its predecessor did: its consumers hold
 * copies of the predecessor's log and accept the recovered task's only where the bytes agree. The
 * run's others follow one at a time and nothing else comes before the run ends, since its
 * predecessor logged nothing between them (anything logged would have ended the run).
 */
final class ReplayCursor {

    private final TreeMap<Long, List<Determinant>> epochs;
    private long epoch;
    private int index;

    /** The run handed out last while some of it is still to come, and the next one's index. */
    @Nullable private Determinant.Run run;

    private int runNext;

    ReplayCursor(TreeMap<Long, List<Determinant>> epochs, long firstEpoch) {
        this.epochs = epochs;
        this.epoch = firstEpoch;
    }

    /** The next determinant, or {@code null} when the current epoch's are used up. */
    @Nullable
    Determinant head() {
        if (run != null) {
            return run.unit(runNext);
        }
        List<Determinant> current = epochs.get(epoch);
        return current != null && index < current.size() ? current.get(index) : null;
    }

    /** Moves past {@link #head()}. */
    void advance() {
        if (run != null) {
            if (++runNext == run.count()) {
                run = null;
            }
            return;
        }
        Determinant taken = epochs.get(epoch).get(index++);
        if (taken instanceof Determinant.Run started && started.count() > 1) {
            run = started;
            runNext = 1;
        }
    }

    /** Whether the next determinant belongs to a run handed out (and logged) already. */
    boolean continuesRun() {
        return run != null;
    }

    /** Determinants of the current epoch not used yet, the rest of a run each counted. */
    int unusedInEpoch() {
        List<Determinant> current = epochs.get(epoch);
        int runLeft = run == null ? 0 : run.count() - runNext;
        return runLeft + (current == null ? 0 : current.size() - index);
    }

    /** Whether every epoch's determinants are used up. */
    boolean usedUp() {
        return unusedInEpoch() == 0 && epochs.tailMap(epoch, false).isEmpty();
    }

    /** The task entered {@code next}; the caller checked that nothing of the last epoch is left. */
    void startEpoch(long next) {
        epochs.headMap(next, false).clear();
        epoch = next;
        index = 0;
        run = null;
    }

    long epoch() {
        return epoch;
    }

    /** The last epoch there are determinants of. */
    long lastEpoch() {
        return epochs.isEmpty() ? epoch : Math.max(epoch, epochs.lastKey());
    }

    /** Where the replay is, for a divergence's diagnosis. */
    String position() {
        List<Determinant> current = epochs.get(epoch);
        if (current == null) {
            return "no determinants left";
        }
        return "determinant "
                + index
                + (run != null
                        ? " (" + (run.count() - runNext) + " of its run " + run + " left)"
                        : "")
                + " of epoch "
                + epoch
                + ", after "
                + recentlyUsed()
                + ", before "
                + current.subList(
                        Math.min(index, current.size()), Math.min(index + 3, current.size()));
    }

    /** The last few determinants used, for a divergence's diagnosis. */
    List<Determinant> recentlyUsed() {
        List<Determinant> current = epochs.get(epoch);
        return current == null
                ? List.of()
                : current.subList(Math.max(0, index - 8), Math.min(index, current.size()));
    }

    /** The determinants still to replay, per epoch (for tests). */
    Map<Long, Integer> remaining() {
        TreeMap<Long, Integer> remaining = new TreeMap<>();
        epochs.forEach((e, list) -> remaining.put(e, e == epoch ? unusedInEpoch() : list.size()));
        return remaining;
    }
}
