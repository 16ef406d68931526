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

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.ExecutionGraph;
import org.apache.flink.runtime.executiongraph.ExecutionJobVertex;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.runtime.scheduler.strategy.SchedulingTopology;

import javax.annotation.Nullable;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The finished producers that restart with a batch, as Flink's tasks "finished on restore".
 *
 * <p>A restarted task restores a checkpoint and reads its input again from there. A producer that
 * had finished before it has no in-flight log to replay from: its partition was released once
 * consumed, or went with its TaskManager, and Flink does not run a finished task again. If the
 * checkpoint records the producer's whole vertex as finished, every consumer read the end of its
 * output before that checkpoint (aligned checkpoints: a channel whose end was not read holds the
 * consumer's alignment up), so nothing of its output is missing after the restore but the end
 * itself. Flink deploys such a task as finished on restore, which only ends its output again; it
 * starts afresh (nobody holds determinants for it), and its running consumers, which ended the
 * channel, ignore its new attempt. Its own finished producers are finished in the checkpoint as
 * well (Flink checks that a finished vertex has only finished predecessors) and restart with it,
 * since it requests their partitions.
 *
 * <p>A producer that finished after the checkpoint, or whose vertex finished only in part, has
 * output its restored consumers read again; that output is gone, which the batch's judgement
 * handles ({@link LocalFailoverPolicy}).
 */
@Internal
final class FinishedProducers {

    private final Predicate<ExecutionVertexID> finished;
    private final Predicate<JobVertexID> finishedInCheckpoint;
    private final Function<ExecutionVertexID, Collection<ExecutionVertexID>> producersOf;

    FinishedProducers(
            Predicate<ExecutionVertexID> finished,
            Predicate<JobVertexID> finishedInCheckpoint,
            Function<ExecutionVertexID, Collection<ExecutionVertexID>> producersOf) {
        this.finished = finished;
        this.finishedInCheckpoint = finishedInCheckpoint;
        this.producersOf = producersOf;
    }

    /** Over the job's current execution graph and the checkpoint the batch restores. */
    static FinishedProducers of(
            ExecutionGraph graph,
            SchedulingTopology topology,
            @Nullable CompletedCheckpoint checkpoint) {
        return new FinishedProducers(
                id ->
                        RestartScope.vertexOf(graph, id).getExecutionState()
                                == ExecutionState.FINISHED,
                vertex -> checkpoint != null && finishedIn(checkpoint, graph.getJobVertex(vertex)),
                id -> RestartScope.producersOf(topology, id));
    }

    /**
     * Whether the checkpoint records every subtask of every operator of the vertex as finished: the
     * condition on which Flink deploys the vertex's tasks finished on restore.
     */
    static boolean finishedIn(CompletedCheckpoint checkpoint, ExecutionJobVertex vertex) {
        for (OperatorIDPair ids : vertex.getOperatorIDs()) {
            OperatorState state = checkpoint.getOperatorStates().get(ids.getGeneratedOperatorID());
            if (state == null || !state.isFullyFinished()) {
                return false;
            }
        }
        return !vertex.getOperatorIDs().isEmpty();
    }

    /** Whether the finished producer restarts finished on restore with its consumers. */
    boolean restartsFinished(ExecutionVertexID producer) {
        return finished.test(producer) && finishedInCheckpoint.test(producer.getJobVertexId());
    }

    /**
     * The finished producers of the batch, and theirs, that restart with it; none of the batch
     * itself.
     */
    Set<ExecutionVertexID> toRestartWith(Set<ExecutionVertexID> batch) {
        Set<ExecutionVertexID> restart = new LinkedHashSet<>();
        Deque<ExecutionVertexID> consumers = new ArrayDeque<>(batch);
        while (!consumers.isEmpty()) {
            for (ExecutionVertexID producer : producersOf.apply(consumers.poll())) {
                if (!batch.contains(producer)
                        && restartsFinished(producer)
                        && restart.add(producer)) {
                    consumers.add(producer);
                }
            }
        }
        return restart;
    }
}
