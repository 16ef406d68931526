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
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.executiongraph.ExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.scheduler.SchedulerOperations;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.runtime.scheduler.strategy.SchedulingStrategy;
import org.apache.flink.runtime.scheduler.strategy.SchedulingStrategyFactory;
import org.apache.flink.runtime.scheduler.strategy.SchedulingTopology;
import org.apache.flink.util.concurrent.FutureUtils;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Flink's scheduling strategy, whose standbys ask for their slots only once the job's own tasks
 * have theirs. Asked for together, the ResourceManager spreads all of them evenly ({@code
 * cluster.evenly-spread-out-slots}) but the slot pool hands the slots to the requests in arrival
 * order: both slots of one TaskManager could go to the job's tasks, and losing that TaskManager
 * would lose every task of the job, where no local recovery is possible. Asked for after, the job's
 * tasks are spread as in a job without standbys, and standbys never take a slot the job needs. Runs
 * on the JobManager's main thread, as the strategy does.
 */
@Internal
final class StandbysAfterPrimaries implements SchedulingStrategyFactory {

    private final SchedulingStrategyFactory flink;
    private final Set<JobVertexID> standbyVertices;

    /**
     * The scheduler the strategy is created for, as the standby coordination sees it: asked for
     * once the scheduler's constructor has returned, when the first standbys wait.
     */
    private final Function<SchedulerOperations, SchedulerAccess> scheduling;

    StandbysAfterPrimaries(
            SchedulingStrategyFactory flink,
            Set<JobVertexID> standbyVertices,
            Function<SchedulerOperations, SchedulerAccess> scheduling) {
        this.flink = flink;
        this.standbyVertices = standbyVertices;
        this.scheduling = scheduling;
    }

    @Override
    public SchedulingStrategy createInstance(
            SchedulerOperations schedulerOperations, SchedulingTopology schedulingTopology) {
        if (standbyVertices.isEmpty()) {
            return flink.createInstance(schedulerOperations, schedulingTopology);
        }
        return flink.createInstance(new Deferring(schedulerOperations), schedulingTopology);
    }

    /** Deploys the job's tasks at once and holds back the standbys until they have slots. */
    private final class Deferring implements SchedulerOperations {

        private final SchedulerOperations scheduler;
        private final Set<ExecutionVertexID> waiting = new LinkedHashSet<>();
        private boolean awaiting;

        private Deferring(SchedulerOperations scheduler) {
            this.scheduler = scheduler;
        }

        @Override
        public void allocateSlotsAndDeploy(List<ExecutionVertexID> vertices) {
            List<ExecutionVertexID> primaries = new ArrayList<>(vertices.size());
            for (ExecutionVertexID vertex : vertices) {
                if (standbyVertices.contains(vertex.getJobVertexId())) {
                    waiting.add(vertex);
                } else {
                    primaries.add(vertex);
                }
            }
            if (!primaries.isEmpty()) {
                scheduler.allocateSlotsAndDeploy(primaries);
            }
            if (!waiting.isEmpty() && !awaiting) {
                awaiting = true;
                // after the strategy's pass: the job's regions that follow are asked for too
                scheduling.apply(scheduler).mainThread().execute(this::deployOncePrimariesPlaced);
            }
        }

        /**
         * Deploys the waiting standbys once no task of the job waits for a slot; a task that fails
         * meanwhile is waited for again in its next attempt. Standbys a restart reset since they
         * were held back come back through the strategy and are waited with again.
         */
        private void deployOncePrimariesPlaced() {
            SchedulerAccess graph = scheduling.apply(scheduler);
            List<CompletableFuture<?>> placing = new ArrayList<>();
            for (ExecutionVertex vertex : graph.graph().getAllExecutionVertices()) {
                Execution attempt = vertex.getCurrentExecutionAttempt();
                if (!standbyVertices.contains(vertex.getJobvertexId())
                        && attempt.getState() == ExecutionState.SCHEDULED) {
                    placing.add(
                            CompletableFuture.anyOf(
                                    attempt.getInitializingOrRunningFuture(),
                                    attempt.getTerminalStateFuture()));
                }
            }
            if (!placing.isEmpty()) {
                FutureUtils.waitForAll(placing)
                        .whenCompleteAsync(
                                (placed, failed) -> deployOncePrimariesPlaced(),
                                graph.mainThread());
                return;
            }
            awaiting = false;
            List<ExecutionVertexID> standbys = new ArrayList<>(waiting.size());
            for (ExecutionVertexID id : waiting) {
                if (graph.vertex(id).getExecutionState() == ExecutionState.CREATED) {
                    standbys.add(id);
                }
            }
            waiting.clear();
            if (!standbys.isEmpty() && graph.graph().getState() == JobStatus.RUNNING) {
                scheduler.allocateSlotsAndDeploy(standbys);
            }
        }
    }
}
