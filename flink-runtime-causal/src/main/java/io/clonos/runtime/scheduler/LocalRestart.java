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

import io.clonos.runtime.standby.StandbyActivations;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.time.Time;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.operators.coordination.ClonosCoordinatorGatewayPatch;
import org.apache.flink.runtime.operators.coordination.OperatorCoordinator;
import org.apache.flink.runtime.operators.coordination.OperatorCoordinatorHolder;
import org.apache.flink.runtime.scheduler.ExecutionVertexVersion;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;

import org.slf4j.Logger;

import java.util.List;
import java.util.Set;

/**
 * Deploys a batch of restarted subtasks once their old attempts are gone: restores the latest
 * completed checkpoint to the new attempts only, resets the operator coordinators of the restarted
 * subtasks (so that sources get their splits back), deploys the new attempts in topological order,
 * holds checkpoints back while they replay ({@link CheckpointPause}), and tells the running
 * consumers of each restarted producer where it runs now ({@link RestartedProducers}). Every other
 * task keeps its attempt. JobManager main thread.
 */
final class LocalRestart {

    private final SchedulerAccess scheduler;
    private final LocalFailoverPolicy<ExecutionVertexID> policy;
    private final CheckpointPause<ExecutionVertexID> checkpointPause;
    private final StandbyActivations activations;
    private final Counter localRecoveries;
    private final Time rpcTimeout;
    private final Logger log;

    LocalRestart(
            SchedulerAccess scheduler,
            LocalFailoverPolicy<ExecutionVertexID> policy,
            CheckpointPause<ExecutionVertexID> checkpointPause,
            StandbyActivations activations,
            Counter localRecoveries,
            Time rpcTimeout,
            Logger log) {
        this.scheduler = scheduler;
        this.policy = policy;
        this.checkpointPause = checkpointPause;
        this.activations = activations;
        this.localRecoveries = localRecoveries;
        this.rpcTimeout = rpcTimeout;
        this.log = log;
    }

    /**
     * Deploys new attempts of the batch's vertices whose versions are still current, unless the job
     * left RUNNING meanwhile (a global failover took over).
     */
    void deploy(Set<ExecutionVertexVersion> versions) throws Exception {
        Set<ExecutionVertexID> batch =
                scheduler.versioner().getUnmodifiedExecutionVertices(versions);
        if (batch.isEmpty() || scheduler.graph().getState() != JobStatus.RUNNING) {
            return;
        }
        // A checkpoint triggered as the tasks failed may have registered after the abort at failure
        // time; it would wait for the dead attempts and block every later one until it times out.
        RestartScope.abortPendingCheckpoints(scheduler.graph());
        scheduler.resetForNewExecutions(batch);
        scheduler.restoreEndOfData(batch);
        long checkpointId = RestartScope.restoreLatestCheckpoint(scheduler.graph(), batch);
        for (ExecutionVertexID id : batch) {
            for (OperatorCoordinatorHolder coordinator :
                    scheduler.vertex(id).getJobVertex().getOperatorCoordinators()) {
                ClonosCoordinatorGatewayPatch.subtaskReset(
                        coordinator, id.getSubtaskIndex(), checkpointId);
            }
        }
        List<ExecutionVertexID> ordered = scheduler.topologicalOrder(batch);
        scheduler.deploy(ordered);
        checkpointPause.replaying(ordered);
        activations.deployed();
        RestartedProducers.announceOnceStarted(
                ordered,
                batch,
                scheduler.versioner(),
                scheduler::vertex,
                scheduler.mainThread(),
                rpcTimeout);
        policy.restarted(ordered, checkpointId);
        localRecoveries.inc();
        log.info(
                "Restarted {} locally from checkpoint {}.",
                scheduler.names(ordered),
                checkpointId == OperatorCoordinator.NO_CHECKPOINT
                        ? "none (no checkpoint completed yet)"
                        : checkpointId);
    }
}
