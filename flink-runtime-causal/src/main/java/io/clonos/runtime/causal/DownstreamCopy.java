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
 * system a sink writes to) has not been given yet: the task's own log, at distance 1, and the
 * upstream logs the task holds whose distance to the holder is within the determinant sharing
 * depth. Reading closes the task's open run ({@link TaskCausalLog#deltasSince}), so that every
 * choice made before the read is in what it returns.
 *
 * <p>Not thread-safe: one reader per holder, on one thread at a time.
 */
@Internal
public final class DownstreamCopy {

    private final TaskCausalLog.Position own = new TaskCausalLog.Position();
    private final HeldCausalLogs.Reader held = new HeldCausalLogs.Reader();

    /** What the holder is to get of {@code task}'s logs since the last call; empty if nothing. */
    public List<SharedDelta> next(CausalTask task) {
        List<SharedDelta> deltas = null;
        TaskCausalLog log = task.log();
        if (log.hasNewSince(own)) {
            for (CausalLogDelta delta : log.deltasSince(own)) {
                deltas = deltas == null ? new ArrayList<>() : deltas;
                deltas.add(new SharedDelta(delta, 1));
            }
        }
        if (task.sharingDepth() < 0 || task.sharingDepth() > 1) {
            List<SharedDelta> forwarded = task.held().sharedSince(held, task.sharingDepth());
            if (!forwarded.isEmpty()) {
                deltas = deltas == null ? new ArrayList<>() : deltas;
                deltas.addAll(forwarded);
            }
        }
        return deltas == null ? List.of() : deltas;
    }
}
