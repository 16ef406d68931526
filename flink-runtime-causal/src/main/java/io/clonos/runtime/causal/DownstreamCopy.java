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

import java.util.ArrayList;
import java.util.List;

/**
 * What one downstream holder of a task's determinants (a consumer connection, or the external
 * system a sink writes to) has not been given yet: the task's own log, and the upstream logs the
 * task holds whose distance at the holder is within the determinant sharing depth ({@link
 * DeterminantSharing}). Reading closes the task's open run ({@link TaskCausalLog#deltasSince}), so
 * that every choice made before the read is in what it returns.
 *
 * <p>Not thread-safe: one reader per holder, on one thread at a time.
 */
@Internal
public final class DownstreamCopy {

    private final TaskCausalLog.Position own = new TaskCausalLog.Position();
    private final HeldCausalLogs.Reader held = new HeldCausalLogs.Reader();

    /** Whether the holder is in another TaskManager (or outside the cluster) than the task. */
    private final boolean remote;

    /** A holder in another TaskManager, or outside the cluster. */
    public DownstreamCopy() {
        this(true);
    }

    /**
     * @param remote whether the holder is in another TaskManager than the task
     */
    public DownstreamCopy(boolean remote) {
        this.remote = remote;
    }

    /** What the holder is to get of {@code task}'s logs since the last call; empty if nothing. */
    public List<SharedDelta> next(CausalTask task) {
        List<SharedDelta> deltas = null;
        DeterminantSharing sharing = task.sharing();
        TaskCausalLog log = task.log();
        if (log.hasNewSince(own)) {
            int distance = sharing.ownDistance(remote);
            for (CausalLogDelta delta : log.deltasSince(own)) {
                deltas = deltas == null ? new ArrayList<>() : deltas;
                deltas.add(new SharedDelta(delta, distance));
            }
        }
        if (sharing.forwardsHeld(remote)) {
            List<SharedDelta> forwarded = task.held().sharedSince(held, sharing, remote);
            if (!forwarded.isEmpty()) {
                deltas = deltas == null ? new ArrayList<>() : deltas;
                deltas.addAll(forwarded);
            }
        }
        return deltas == null ? List.of() : deltas;
    }
}
