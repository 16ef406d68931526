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

package io.clonos.runtime.scheduler;

import org.apache.flink.runtime.concurrent.ComponentMainThreadExecutor;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.executiongraph.ExecutionGraph;
import org.apache.flink.runtime.executiongraph.ExecutionVertex;
import org.apache.flink.runtime.scheduler.ExecutionVertexVersioner;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;

import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

/**
 * What the scheduler's collaborators ({@link LocalRestart}, {@link StandbyCoordination}) ask of
 * {@link ClonosScheduler}: Flink's scheduler operations, some of them protected there. JobManager
 * main thread; usable once the scheduler's constructor returned.
 */
interface SchedulerAccess {

    ExecutionGraph graph();

    ExecutionVertex vertex(ExecutionVertexID id);

    ComponentMainThreadExecutor mainThread();

    ExecutionVertexVersioner versioner();

    CompletableFuture<?> cancel(Execution execution);

    /** Flink's reset of the vertices for new attempts. */
    void resetForNewExecutions(Set<ExecutionVertexID> vertices);

    /** Flink's slot allocation and deployment of the vertices' current attempts, in this order. */
    void deploy(List<ExecutionVertexID> vertices);

    /** The vertices among {@code ids} in the job's topological order. */
    List<ExecutionVertexID> topologicalOrder(Set<ExecutionVertexID> ids);

    /** Flink's end-of-data bookkeeping forgets the vertices' old attempts. */
    void restoreEndOfData(Set<ExecutionVertexID> vertices);

    /** The subtasks' names, in the order given, for the log. */
    default List<String> names(Collection<ExecutionVertexID> ids) {
        return ids.stream()
                .map(id -> vertex(id).getTaskNameWithSubtaskIndex())
                .collect(Collectors.toList());
    }
}
