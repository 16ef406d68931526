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

package org.apache.flink.runtime.scheduler;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;

import java.util.Set;

/**
 * <b>Patch of Flink's behaviour.</b> Tells the scheduler's end-of-data bookkeeping that subtasks
 * restart. Flink does so in {@code SchedulerBase#restoreState}, which a local restart does not go
 * through (it restores the checkpoint itself, see {@code ClonosScheduler}); without it, once every
 * task has reported the end of its data Flink forgets the vertices, and a restarted subtask that
 * reports its end of data again fails the JobManager's RPC. The listener is reachable only through
 * a package-private accessor, hence this class in Flink's package.
 */
@Internal
public final class ClonosEndOfDataPatch {

    private ClonosEndOfDataPatch() {}

    /** The subtasks {@code restarted} have not reached the end of their data (again). */
    public static void restoreVertices(SchedulerBase scheduler, Set<ExecutionVertexID> restarted) {
        scheduler.getVertexEndOfDataListener().restoreVertices(restarted);
    }
}
