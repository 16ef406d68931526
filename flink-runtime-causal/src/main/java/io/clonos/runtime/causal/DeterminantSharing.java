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

import io.clonos.runtime.configuration.ClonosOptions;
import io.clonos.runtime.configuration.ClonosOptions.DeterminantSharingHops;

import org.apache.flink.annotation.Internal;

/**
 * How far a task's determinants travel downstream: the determinant sharing depth (DSD), and which
 * hops count towards it. A copy's <em>distance</em> is the number of counted hops from the task
 * whose log it is; a task hands a log on while the distance at the receiver stays within the depth.
 *
 * <p>With {@link DeterminantSharingHops#BETWEEN_TASKMANAGERS} a hop inside one TaskManager (a local
 * channel) is free: the tasks of a TaskManager fail together, so a copy there adds nothing against
 * the loss of the TaskManager, and every determinant of a lost TaskManager's tasks that reached a
 * survivor did so at a distance of at most the number of TaskManagers on its way. The JobManager's
 * judgment of a failure ({@code ConnectedFailures}) counts the same hops.
 *
 * @param depth {@code clonos.determinant-sharing-depth}: negative for the full depth
 * @param everyHopCounts {@code clonos.determinant-sharing-hops: every-task}, the paper's depth
 */
@Internal
public record DeterminantSharing(int depth, boolean everyHopCounts) {

    /** The sharing of a job's tasks: its depth, and its {@code clonos.determinant-sharing-hops}. */
    public static DeterminantSharing of(int depth, DeterminantSharingHops hops) {
        return new DeterminantSharing(depth, hops == DeterminantSharingHops.EVERY_TASK);
    }

    /** Every log to every task downstream. */
    public static DeterminantSharing full() {
        return new DeterminantSharing(ClonosOptions.FULL_DETERMINANT_SHARING_DEPTH, false);
    }

    /** What one hop to a consumer adds to a copy's distance. */
    public int hop(boolean remote) {
        return remote || everyHopCounts ? 1 : 0;
    }

    /** The distance of a task's own log at a consumer it reaches through a remote or local hop. */
    public int ownDistance(boolean remote) {
        return hop(remote);
    }

    /**
     * The distance at the consumer of a log held at {@code held}, or -1 if the consumer is not to
     * get it.
     */
    public int forwardedDistance(int held, boolean remote) {
        int distance = held + hop(remote);
        return depth >= 0 && distance > depth ? -1 : distance;
    }

    /** Whether a hop of this kind hands any held log on (with every hop counted: depth over 1). */
    public boolean forwardsHeld(boolean remote) {
        return forwardedDistance(everyHopCounts ? 1 : 0, remote) >= 0;
    }

    /**
     * The distance from this task of a log of another task that a consumer handed back at {@code
     * distance} from itself while this task recovered, or -1 if it is not an upstream log of this
     * task. With every hop counted, a log at distance 1 from the consumer is one of its other
     * producers'; with free hops inside a TaskManager the hop is not known, and the log is kept, at
     * the smaller distance it may have (a copy kept too close is handed on further, never less
     * far).
     */
    public int handedBackDistance(int distance) {
        if (everyHopCounts) {
            return distance > 1 ? distance - 1 : -1;
        }
        return Math.max(0, distance - 1);
    }
}
