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

import io.clonos.runtime.standby.StandbyVertices;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.checkpoint.CheckpointCoordinator;
import org.apache.flink.runtime.checkpoint.CheckpointException;
import org.apache.flink.runtime.checkpoint.CheckpointFailureReason;
import org.apache.flink.runtime.checkpoint.JobManagerTaskRestore;
import org.apache.flink.runtime.checkpoint.TaskStateSnapshot;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.executiongraph.ExecutionGraph;
import org.apache.flink.runtime.executiongraph.ExecutionJobVertex;
import org.apache.flink.runtime.executiongraph.ExecutionVertex;
import org.apache.flink.runtime.jobgraph.IntermediateResultPartitionID;
import org.apache.flink.runtime.operators.coordination.OperatorCoordinator;
import org.apache.flink.runtime.scheduler.strategy.ConsumedPartitionGroup;
import org.apache.flink.runtime.scheduler.strategy.ConsumerVertexGroup;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.runtime.scheduler.strategy.SchedulingResultPartition;
import org.apache.flink.runtime.scheduler.strategy.SchedulingTopology;
import org.apache.flink.runtime.taskmanager.TaskManagerLocation;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * What a local restart reads from the job's graph: who consumes whose output and which run in one
 * TaskManager (to judge connected failures), which tasks are primaries (not standbys), and the
 * checkpoint state the restarted subtasks get, without touching the running ones.
 */
@Internal
final class RestartScope {

    private RestartScope() {}

    static Collection<ExecutionVertexID> consumersOf(
            SchedulingTopology topology, ExecutionVertexID id) {
        List<ExecutionVertexID> consumers = new ArrayList<>();
        for (SchedulingResultPartition partition : topology.getVertex(id).getProducedResults()) {
            for (ConsumerVertexGroup group : partition.getConsumerVertexGroups()) {
                group.forEach(consumers::add);
            }
        }
        return consumers;
    }

    /** The tasks whose output task {@code id} reads. */
    /**
     * Whether the current attempts of two subtasks (the failed ones, while a batch is judged) were
     * deployed to the same TaskManager; false if either has no TaskManager.
     */
    static boolean sameTaskManager(
            ExecutionGraph graph, ExecutionVertexID one, ExecutionVertexID other) {
        TaskManagerLocation first =
                vertexOf(graph, one).getCurrentExecutionAttempt().getAssignedResourceLocation();
        TaskManagerLocation second =
                vertexOf(graph, other).getCurrentExecutionAttempt().getAssignedResourceLocation();
        return first != null
                && second != null
                && first.getResourceID().equals(second.getResourceID());
    }

    static Collection<ExecutionVertexID> producersOf(
            SchedulingTopology topology, ExecutionVertexID id) {
        List<ExecutionVertexID> producers = new ArrayList<>();
        for (ConsumedPartitionGroup group : topology.getVertex(id).getConsumedPartitionGroups()) {
            for (IntermediateResultPartitionID partition : group) {
                producers.add(topology.getResultPartition(partition).getProducer().getId());
            }
        }
        return producers;
    }

    /** The job's tasks but the standbys. */
    static Set<ExecutionVertexID> primaryVertices(ExecutionGraph graph) {
        Set<ExecutionVertexID> primaries = new HashSet<>();
        for (ExecutionVertex vertex : graph.getAllExecutionVertices()) {
            if (StandbyVertices.primaryOf(vertex.getJobVertex().getJobVertex()).isEmpty()) {
                primaries.add(vertex.getID());
            }
        }
        return primaries;
    }

    /**
     * Restores the latest completed checkpoint to the new attempts of {@code batch}. Flink's state
     * assignment must see every job vertex but the standbys (it looks at each vertex's neighbours;
     * standbys have none, and no state), and it assigns state to every current attempt; the running
     * attempts get back what they had, since they read it only when they are deployed.
     */
    static long restoreLatestCheckpoint(ExecutionGraph graph, Set<ExecutionVertexID> batch)
            throws Exception {
        CheckpointCoordinator coordinator = graph.getCheckpointCoordinator();
        if (coordinator == null) {
            return OperatorCoordinator.NO_CHECKPOINT;
        }
        Map<Execution, JobManagerTaskRestore> running = new HashMap<>();
        for (ExecutionVertex vertex : graph.getAllExecutionVertices()) {
            if (!batch.contains(vertex.getID())) {
                running.put(
                        vertex.getCurrentExecutionAttempt(),
                        vertex.getCurrentExecutionAttempt().getTaskRestore());
            }
        }
        // standbys have no state in checkpoints (they are left out of them)
        Set<ExecutionJobVertex> all = new LinkedHashSet<>();
        for (ExecutionJobVertex vertex : graph.getAllVertices().values()) {
            if (StandbyVertices.primaryOf(vertex.getJobVertex()).isEmpty()) {
                all.add(vertex);
            }
        }
        OptionalLong restored = coordinator.restoreLatestCheckpointedStateToSubtasks(all);
        running.forEach(Execution::setInitialState);
        if (restored.isPresent()) {
            for (ExecutionVertexID id : batch) {
                Execution attempt = vertexOf(graph, id).getCurrentExecutionAttempt();
                if (attempt.getTaskRestore() == null) {
                    // Flink gives a subtask that held no state in the checkpoint nothing to
                    // restore, so it would not know which checkpoint it restarts from; but its
                    // epoch is that checkpoint's: its upstream replays from there and its
                    // consumers hand back determinants from there. An empty snapshot names the
                    // checkpoint.
                    attempt.setInitialState(
                            new JobManagerTaskRestore(
                                    restored.getAsLong(), new TaskStateSnapshot()));
                }
            }
        }
        return restored.orElse(OperatorCoordinator.NO_CHECKPOINT);
    }

    /**
     * Aborts the checkpoints in progress: they wait for attempts that are gone, and would block
     * every later checkpoint until they time out.
     */
    static void abortPendingCheckpoints(ExecutionGraph graph) {
        CheckpointCoordinator coordinator = graph.getCheckpointCoordinator();
        if (coordinator != null) {
            coordinator.abortPendingCheckpoints(
                    new CheckpointException(CheckpointFailureReason.JOB_FAILOVER_REGION));
        }
    }

    static ExecutionVertex vertexOf(ExecutionGraph graph, ExecutionVertexID id) {
        return graph.getJobVertex(id.getJobVertexId()).getTaskVertices()[id.getSubtaskIndex()];
    }
}
