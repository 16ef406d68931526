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
import io.clonos.runtime.standby.StandbyManager;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.executiongraph.ExecutionGraph;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.operators.coordination.CoordinationRequest;
import org.apache.flink.runtime.operators.coordination.CoordinationResponse;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.util.FlinkException;

import org.slf4j.Logger;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * The coordination requests that are Clonos's, not an operator coordinator's: standbys' requests,
 * tasks' reports of lost peers and of their replays' end, and failure injection. They arrive by the
 * path Flink's tasks and REST clients share, so each is checked before it is acted on. JobManager
 * main thread.
 */
@Internal
final class ClonosRequests {

    private final ClonosConfiguration clonos;
    private final StandbyManager standbys;
    private final LostTaskManagers lost;
    private final CheckpointPause<ExecutionVertexID> checkpointPause;
    private final Supplier<ExecutionGraph> graph;
    private final Logger log;

    ClonosRequests(
            ClonosConfiguration clonos,
            StandbyManager standbys,
            LostTaskManagers lost,
            CheckpointPause<ExecutionVertexID> checkpointPause,
            Supplier<ExecutionGraph> graph,
            Logger log) {
        this.clonos = clonos;
        this.standbys = standbys;
        this.lost = lost;
        this.checkpointPause = checkpointPause;
        this.graph = graph;
        this.log = log;
    }

    /** The answer to a request of Clonos's; empty for the job's operator coordinators. */
    Optional<CoordinationResponse> answer(OperatorID operator, CoordinationRequest request)
            throws FlinkException {
        if (StandbyManager.isStandbyRequest(request)) {
            return Optional.of(standbys.answer(request));
        }
        if (!FailTaskRequest.TARGET.equals(operator)) {
            return Optional.empty();
        }
        if (request instanceof LostTaskManagerReport report) {
            return Optional.of(lost.reported(report, graph.get()));
        }
        if (request instanceof ReplayEndReport report) {
            Execution attempt = graph.get().getRegisteredExecutions().get(report.attempt());
            if (attempt != null && attempt == attempt.getVertex().getCurrentExecutionAttempt()) {
                checkpointPause.replayEnded(attempt.getVertex().getID());
            }
            return Optional.of(new ReplayEndReport.Received());
        }
        if (request instanceof FailTaskRequest failure) {
            return Optional.of(
                    TaskFailureInjection.fail(
                            clonos, graph.get().getAllVertices().values(), failure, log));
        }
        return Optional.empty();
    }
}
