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

import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.protocol.FailTaskRequest;
import io.clonos.runtime.protocol.FreshStartRequest;
import io.clonos.runtime.protocol.LostTaskManagerReport;
import io.clonos.runtime.protocol.ReplayEndReport;
import io.clonos.runtime.protocol.SchedulerEndpoint;
import io.clonos.runtime.protocol.TaskReport;
import io.clonos.runtime.shuffle.FreshStarts;
import io.clonos.runtime.standby.StandbyManager;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.executiongraph.ExecutionGraph;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.operators.coordination.CoordinationRequest;
import org.apache.flink.runtime.operators.coordination.CoordinationResponse;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.util.FlinkException;

import org.slf4j.Logger;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * The messages to Clonos's scheduler, not to an operator coordinator: tasks' reports of lost peers
 * and of their replays' end, standbys' requests, and failure injection. Reports come as operator
 * events, which only tasks send and which Flink gives with the sending attempt; requests come by
 * the path that tasks and REST clients share, so each is checked before it is acted on (a standby's
 * by its secret, a failure request by the cluster's consent), and a report sent that way is
 * refused. JobManager main thread.
 */
@Internal
final class ClonosRequests {

    private final ClonosConfiguration clonos;
    private final StandbyManager standbys;
    private final LostTaskManagerDetector lost;
    private final CheckpointPause<ExecutionVertexID> checkpointPause;
    private final Supplier<ExecutionGraph> graph;
    private final FreshStarts freshStarts;
    private final Logger log;

    ClonosRequests(
            ClonosConfiguration clonos,
            StandbyManager standbys,
            LostTaskManagerDetector lost,
            CheckpointPause<ExecutionVertexID> checkpointPause,
            Supplier<ExecutionGraph> graph,
            FreshStarts freshStarts,
            Logger log) {
        this.clonos = clonos;
        this.standbys = standbys;
        this.lost = lost;
        this.checkpointPause = checkpointPause;
        this.graph = graph;
        this.freshStarts = freshStarts;
        this.log = log;
    }

    /** The answer to a request of Clonos's; empty for the job's operator coordinators. */
    Optional<CoordinationResponse> answer(OperatorID operator, CoordinationRequest request)
            throws FlinkException {
        if (StandbyManager.isStandbyRequest(request)) {
            return Optional.of(standbys.answer(request));
        }
        if (!SchedulerEndpoint.OPERATOR_ID.equals(operator)) {
            return Optional.empty();
        }
        if (request instanceof FreshStartRequest fresh) {
            return Optional.of(
                    new FreshStartRequest.Response(
                            freshStarts.isMarked(graph.get().getJobID(), fresh.attempt())));
        }
        if (request instanceof FailTaskRequest failure) {
            return Optional.of(
                    TaskFailureInjection.fail(
                            clonos, graph.get().getAllVertices().values(), failure, log));
        }
        throw new FlinkException(
                "Refused a coordination request to Clonos's scheduler ("
                        + request.getClass().getName()
                        + "): it takes failure and fresh-start requests only; tasks report as operator events.");
    }

    /**
     * Acts on a task's report; false for events to the job's operator coordinators. Never throws:
     * an event that fails would fail the task that sent it.
     */
    boolean received(ExecutionAttemptID sender, OperatorID operator, OperatorEvent event) {
        if (!SchedulerEndpoint.OPERATOR_ID.equals(operator)) {
            return false;
        }
        Execution attempt = graph.get().getRegisteredExecutions().get(sender);
        if (!(event instanceof TaskReport report)) {
            log.warn("Ignored an event to Clonos's scheduler that is no report: {}", event);
        } else if (attempt == null) {
            log.debug("Ignored {} from {}, an attempt that has ended.", report, sender);
        } else if (report instanceof LostTaskManagerReport lostPeer) {
            String reporter = attempt.getVertex().getTaskNameWithSubtaskIndex();
            log.debug(
                    "{} from {}: {}",
                    lostPeer,
                    reporter,
                    lost.reported(lostPeer, reporter, graph.get()));
        } else if (report instanceof ReplayEndReport
                && attempt == attempt.getVertex().getCurrentExecutionAttempt()) {
            checkpointPause.replayEnded(attempt.getVertex().getID());
        }
        return true;
    }
}
