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
import io.clonos.runtime.jobgraph.VertexReplay;
import io.clonos.runtime.shuffle.ClonosShuffleMaster;
import io.clonos.runtime.shuffle.FreshStarts;
import io.clonos.runtime.standby.StandbyActivations;
import io.clonos.runtime.standby.StandbyManager;
import io.clonos.runtime.standby.StandbyVertices;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.time.Time;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.failure.FailureEnricher;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.checkpoint.CheckpointRecoveryFactory;
import org.apache.flink.runtime.checkpoint.CheckpointsCleaner;
import org.apache.flink.runtime.checkpoint.ClonosCheckpointPlanPatch;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.concurrent.ComponentMainThreadExecutor;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.executiongraph.ExecutionGraph;
import org.apache.flink.runtime.executiongraph.ExecutionVertex;
import org.apache.flink.runtime.executiongraph.JobStatusListener;
import org.apache.flink.runtime.executiongraph.TaskExecutionStateTransition;
import org.apache.flink.runtime.executiongraph.failover.FailoverStrategy;
import org.apache.flink.runtime.executiongraph.failover.FailureHandlingResult;
import org.apache.flink.runtime.executiongraph.failover.RestartBackoffTimeStrategy;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.metrics.groups.JobManagerJobMetricGroup;
import org.apache.flink.runtime.operators.coordination.CoordinationRequest;
import org.apache.flink.runtime.operators.coordination.CoordinationResponse;
import org.apache.flink.runtime.operators.coordination.OperatorCoordinator;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;
import org.apache.flink.runtime.scheduler.ClonosEndOfDataPatch;
import org.apache.flink.runtime.scheduler.DefaultScheduler;
import org.apache.flink.runtime.scheduler.ExecutionDeployer;
import org.apache.flink.runtime.scheduler.ExecutionGraphFactory;
import org.apache.flink.runtime.scheduler.ExecutionOperations;
import org.apache.flink.runtime.scheduler.ExecutionSlotAllocatorFactory;
import org.apache.flink.runtime.scheduler.ExecutionVertexVersion;
import org.apache.flink.runtime.scheduler.ExecutionVertexVersioner;
import org.apache.flink.runtime.scheduler.VertexParallelismStore;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.runtime.scheduler.strategy.SchedulingExecutionVertex;
import org.apache.flink.runtime.scheduler.strategy.SchedulingStrategyFactory;
import org.apache.flink.runtime.shuffle.ShuffleMaster;
import org.apache.flink.util.FlinkException;
import org.apache.flink.util.IterableUtils;
import org.apache.flink.util.concurrent.FutureUtils;
import org.apache.flink.util.concurrent.ScheduledExecutor;

import org.slf4j.Logger;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import static org.apache.flink.configuration.CheckpointingOptions.ENABLE_CHECKPOINTS_AFTER_TASKS_FINISH;

/**
 * The JobManager's scheduler for a job on Clonos: Flink's default scheduler whose failover restarts
 * only the failed tasks.
 *
 * <p>A failed task is recovered locally: every other task keeps running with the same attempt.
 * Failures that arrive together (a lost TaskManager fails one subtask of every vertex it hosted)
 * are restarted as one batch, after Flink's restart delay and counted once against Flink's restart
 * strategy, once the probes its first failure started have ended ({@link
 * LostTaskManagerDetector#sweep}). For the batch, the scheduler aborts the pending checkpoints,
 * waits until the old attempts are gone, restores the latest completed checkpoint to the new
 * attempts only, resets the operator coordinators of the restarted subtasks (so that sources get
 * their splits back), deploys the new attempts in topological order, and tells the running
 * consumers of each restarted producer where it runs now. The network replays the producers'
 * in-flight logs to restarted consumers.
 *
 * <p>Falls back to Flink's restart of the whole job where {@link LocalFailoverPolicy} finds that no
 * local recovery covers the failure, or where the restart strategy refuses; logged and counted in
 * {@code clonos.globalFallbacks}, in all and per reason ({@link GlobalFallbackCounter}).
 */
@Internal
public class ClonosScheduler extends DefaultScheduler {

    private final ClonosConfiguration clonos;
    private final Logger log;
    private final SchedulerAccess access = new Access();
    private final GlobalFallbackCounter globalFallbacks;
    private final StandbyManager standbys;
    private final LostTaskManagerDetector lost;
    private final ClonosRequests requests;
    private final LocalRestart localRestart;

    /** Where replacements find their standbys, and where standbys go. */
    private final StandbyCoordination standbyCoordination;

    /** Which failures recover locally, and why not the others. */
    private final LocalFailoverPolicy<ExecutionVertexID> policy;

    /** The attempts deployed to start afresh; the shuffle master's. */
    private final FreshStarts freshStarts;

    /** Holds checkpoints back while restarted tasks replay. */
    private final CheckpointPause<ExecutionVertexID> checkpointPause;

    /** Failed vertices waiting for the restart of the current batch, with their versions. */
    private final Map<ExecutionVertexID, ExecutionVertexVersion> pendingRestart = new HashMap<>();

    ClonosScheduler(
            ClonosConfiguration clonos,
            StandbyActivations standbyActivations,
            LostTaskManagerDetector lost,
            Logger log,
            JobGraph jobGraph,
            Executor ioExecutor,
            Configuration jobMasterConfiguration,
            Consumer<ComponentMainThreadExecutor> startUpAction,
            ScheduledExecutor delayExecutor,
            ClassLoader userCodeLoader,
            CheckpointsCleaner checkpointsCleaner,
            CheckpointRecoveryFactory checkpointRecoveryFactory,
            JobManagerJobMetricGroup jobManagerJobMetricGroup,
            SchedulingStrategyFactory schedulingStrategyFactory,
            FailoverStrategy.Factory failoverStrategyFactory,
            RestartBackoffTimeStrategy restartBackoffTimeStrategy,
            ExecutionOperations executionOperations,
            ExecutionVertexVersioner executionVertexVersioner,
            ExecutionSlotAllocatorFactory executionSlotAllocatorFactory,
            long initializationTimestamp,
            ComponentMainThreadExecutor mainThreadExecutor,
            JobStatusListener jobStatusListener,
            Collection<FailureEnricher> failureEnrichers,
            ExecutionGraphFactory executionGraphFactory,
            ShuffleMaster<?> shuffleMaster,
            Time rpcTimeout,
            VertexParallelismStore vertexParallelismStore,
            ExecutionDeployer.Factory executionDeployerFactory)
            throws Exception {
        super(
                log,
                jobGraph,
                ioExecutor,
                jobMasterConfiguration,
                startUpAction,
                delayExecutor,
                userCodeLoader,
                checkpointsCleaner,
                checkpointRecoveryFactory,
                jobManagerJobMetricGroup,
                schedulingStrategyFactory,
                failoverStrategyFactory,
                restartBackoffTimeStrategy,
                executionOperations,
                executionVertexVersioner,
                executionSlotAllocatorFactory,
                initializationTimestamp,
                mainThreadExecutor,
                jobStatusListener,
                failureEnrichers,
                executionGraphFactory,
                shuffleMaster,
                rpcTimeout,
                vertexParallelismStore,
                executionDeployerFactory);
        this.clonos = clonos;
        this.policy = new LocalFailoverPolicy<>(clonos);
        this.freshStarts = ClonosShuffleMaster.of(shuffleMaster).freshStarts();
        this.log = log;
        MetricGroup metrics = jobManagerJobMetricGroup.addGroup("clonos");
        this.globalFallbacks = new GlobalFallbackCounter(metrics);
        this.standbys = new StandbyManager(this::getExecutionGraph, metrics, log);
        this.lost = lost;
        this.standbyCoordination =
                new StandbyCoordination(clonos, standbys, standbyActivations, access, log);
        standbyActivations.registerMetrics(metrics);
        this.checkpointPause =
                CheckpointPause.of(
                        clonos.getCheckpointPause(), this, getMainThreadExecutor(), metrics, log);
        this.requests =
                new ClonosRequests(
                        clonos,
                        standbys,
                        lost,
                        checkpointPause,
                        this::getExecutionGraph,
                        freshStarts,
                        log);
        this.localRestart =
                new LocalRestart(
                        access,
                        policy,
                        checkpointPause,
                        standbyActivations,
                        metrics.counter("localRecoveries"),
                        rpcTimeout,
                        log);
        // standbys have no state: one that does not run must not hold up the job's checkpoints
        ClonosCheckpointPlanPatch.install(
                getExecutionGraph(),
                clonos.isStandbyEnabled(),
                vertex -> StandbyVertices.primaryOf(vertex.getJobVertex()).isPresent(),
                jobMasterConfiguration.get(ENABLE_CHECKPOINTS_AFTER_TASKS_FINISH));
        log.info(
                "Scheduling {} ({}) on Clonos with {}.",
                jobGraph.getName(),
                jobGraph.getJobID(),
                clonos);
    }

    @Override
    protected void handleTaskFailure(Execution failedExecution, @Nullable Throwable error) {
        if (getExecutionGraph().getState() == JobStatus.RUNNING
                && StandbyVertices.primaryOf(
                                failedExecution.getVertex().getJobVertex().getJobVertex())
                        .isPresent()) {
            standbyCoordination.standbyFailed(failedExecution, error);
            return;
        }
        JobStatus job = getExecutionGraph().getState();
        JobVertex failedVertex = failedExecution.getVertex().getJobVertex().getJobVertex();
        LocalFailoverPolicy.NotLocal fallbackReason =
                policy.whyNotLocal(job, failedVertex, error).orElse(null);
        if (fallbackReason != null && policy.restartsAfresh(job, failedVertex, error)) {
            log.warn(
                    "Cannot recover {} by determinants ({}); clonos.recovery.orphan-fallback is at-least-once: it restarts alone, "
                            + "without them, and its consumers may see its records twice.",
                    failedExecution.getVertex().getTaskNameWithSubtaskIndex(),
                    fallbackReason.why());
            markFresh(failedExecution.getVertex().getID());
            fallbackReason = null;
        }
        if (fallbackReason != null) {
            fallBack(fallbackReason, failedExecution, error);
            return;
        }
        ExecutionVertexID failed = failedExecution.getVertex().getID();
        if (pendingRestart.containsKey(failed)) {
            notifyCoordinatorsAboutTaskFailure(failedExecution, error);
            return;
        }
        if (!pendingRestart.isEmpty()) {
            // part of the batch being prepared (e.g. the other subtasks of a lost TaskManager)
            notifyCoordinatorsAboutTaskFailure(failedExecution, error);
            pendingRestart.putAll(
                    executionVertexVersioner.recordVertexModifications(Set.of(failed)));
            return;
        }

        FailureHandlingResult result = recordTaskFailure(failedExecution, error);
        if (!result.canRestart() || result.isGlobalFailure()) {
            globalFallbacks.count(GlobalFallbackCounter.Reason.RESTART_STRATEGY);
            log.warn(
                    "Restart strategy refuses to restart {}; Flink handles the failure.",
                    failedExecution.getVertex().getTaskNameWithSubtaskIndex());
            maybeRestartTasks(result);
            return;
        }
        if (failedExecution.getFailureInfo().isPresent()) {
            // a task that cancelled itself has no failure info for Flink's exception history
            archiveFromFailureHandlingResult(createFailureHandlingResultSnapshot(result));
        }
        RestartScope.abortPendingCheckpoints(getExecutionGraph());
        pendingRestart.putAll(executionVertexVersioner.recordVertexModifications(Set.of(failed)));
        lost.sweep(getExecutionGraph(), failedExecution.getVertex().getTaskNameWithSubtaskIndex());
        log.info(
                "Recovering {} locally (attempt {} failed: {}).",
                failedExecution.getVertex().getTaskNameWithSubtaskIndex(),
                failedExecution.getAttemptNumber(),
                error == null ? "unknown cause" : error.toString());
        CompletedCheckpoint latest = standbys.latestCheckpoint().orElse(null);
        boolean repeated =
                policy.failsAgainBeforeACheckpoint(
                        failed,
                        latest == null
                                ? OperatorCoordinator.NO_CHECKPOINT
                                : latest.getCheckpointID());
        getMainThreadExecutor()
                .schedule(
                        this::restartPendingBatch,
                        clonos.getRestartDelay().millis(repeated, result.getRestartDelayMS()),
                        TimeUnit.MILLISECONDS);
    }

    private void fallBack(
            LocalFailoverPolicy.NotLocal reason,
            Execution failedExecution,
            @Nullable Throwable error) {
        if (reason.reason() != null && policy.isFallback(getExecutionGraph().getState())) {
            globalFallbacks.count(reason.reason());
            log.warn(
                    "Cannot recover {} locally: {}. Falling back to Flink's restart from the last checkpoint.",
                    failedExecution.getVertex().getTaskNameWithSubtaskIndex(),
                    reason.why());
        }
        pendingRestart.clear();
        super.handleTaskFailure(failedExecution, error);
    }

    /**
     * Every restart Flink does (a rollback: after a fallback, a global failure or a refusal of the
     * restart strategy) restarts the tasks afresh: their consumers restart with them, so nobody
     * holds determinants for them and waiting for the consumers to say so only delays the restart.
     */
    @Override
    protected void maybeRestartTasks(FailureHandlingResult result) {
        startAfresh(result);
        super.maybeRestartTasks(result);
    }

    private void startAfresh(FailureHandlingResult result) {
        if (result.canRestart()) {
            result.getVerticesToRestart().forEach(this::markFresh);
        }
    }

    /** The next attempt of {@code vertex} starts afresh: it replays nothing. */
    private void markFresh(ExecutionVertexID vertex) {
        freshStarts.mark(
                getJobId(),
                vertex,
                getExecutionVertex(vertex).getCurrentExecutionAttempt().getAttemptNumber() + 1);
    }

    /**
     * A task that cancels itself (Flink's tasks do when their input partition is released) is a
     * failure too: Flink's scheduler only acts on failed tasks and would leave it dead.
     */
    @Override
    public boolean updateTaskExecutionState(TaskExecutionStateTransition transition) {
        boolean updated = updateTaskExecutionStateOfCancelledTasks(transition);
        if (updated && transition.getExecutionState().isTerminal()) {
            checkpointPause.attemptEnded();
        }
        if (updated && transition.getExecutionState() == ExecutionState.RUNNING) {
            checkpointPause.taskRunning();
        }
        if (updated
                && (transition.getExecutionState() == ExecutionState.FINISHED
                        || transition.getExecutionState() == ExecutionState.RUNNING)) {
            Execution execution =
                    getExecutionGraph().getRegisteredExecutions().get(transition.getID());
            if (execution != null) {
                standbyCoordination.attemptReached(execution, transition.getExecutionState());
            }
        }
        return updated;
    }

    private boolean updateTaskExecutionStateOfCancelledTasks(
            TaskExecutionStateTransition transition) {
        if (transition.getExecutionState() == ExecutionState.CANCELED
                && getExecutionGraph().getState() == JobStatus.RUNNING) {
            Execution execution =
                    getExecutionGraph().getRegisteredExecutions().get(transition.getID());
            if (execution != null
                    && execution.getState() != ExecutionState.CANCELING
                    && !execution.getState().isTerminal()) {
                boolean updated = super.updateTaskExecutionState(transition);
                if (updated) {
                    handleTaskFailure(
                            execution,
                            new IllegalStateException(
                                    "The task cancelled itself",
                                    transition.getError(getClass().getClassLoader())));
                }
                return updated;
            }
        }
        return super.updateTaskExecutionState(transition);
    }

    /** Clonos's requests are answered by {@link ClonosRequests}; the rest by the coordinators. */
    @Override
    public CompletableFuture<CoordinationResponse> deliverCoordinationRequestToCoordinator(
            OperatorID operator, CoordinationRequest request) throws FlinkException {
        Optional<CoordinationResponse> answer = requests.answer(operator, request);
        return answer.isPresent()
                ? CompletableFuture.completedFuture(answer.get())
                : super.deliverCoordinationRequestToCoordinator(operator, request);
    }

    /** Tasks' reports go to {@link ClonosRequests}; the other events to the coordinators. */
    @Override
    public void deliverOperatorEventToCoordinator(
            ExecutionAttemptID sender, OperatorID operator, OperatorEvent event)
            throws FlinkException {
        if (!requests.received(sender, operator, event)) {
            super.deliverOperatorEventToCoordinator(sender, operator, event);
        }
    }

    /** Restarts the failed subtasks of the pending batch locally, or falls back. */
    private void restartPendingBatch() {
        Set<ExecutionVertexVersion> versions = new HashSet<>(pendingRestart.values());
        Set<ExecutionVertexID> batch =
                new HashSet<>(executionVertexVersioner.getUnmodifiedExecutionVertices(versions));
        if (!batch.isEmpty()
                && getExecutionGraph().getState() == JobStatus.RUNNING
                && (lost.awaitingProbes(this::restartPendingBatch)
                        || standbyCoordination.awaitingTransfers(
                                batch, this::restartPendingBatch))) {
            return;
        }
        if (batch.isEmpty() || getExecutionGraph().getState() != JobStatus.RUNNING) {
            pendingRestart.clear();
            return;
        }
        CompletedCheckpoint latest = standbys.latestCheckpoint().orElse(null);
        FinishedProducers finished =
                FinishedProducers.of(getExecutionGraph(), getSchedulingTopology(), latest);
        LocalFailoverPolicy.BatchVerdict<ExecutionVertexID> verdict =
                policy.judge(
                        batch,
                        latest == null
                                ? OperatorCoordinator.NO_CHECKPOINT
                                : latest.getCheckpointID(),
                        RestartScope.primaryVertices(getExecutionGraph()),
                        id -> RestartScope.consumersOf(getSchedulingTopology(), id),
                        id ->
                                VertexReplay.determinantsHeldBySink(
                                        getExecutionVertex(id)
                                                .getJobVertex()
                                                .getJobVertex()
                                                .getConfiguration()),
                        (producer, consumer) ->
                                RestartScope.sameTaskManager(
                                        getExecutionGraph(), producer, consumer),
                        lost.finishedProducers(
                                getExecutionGraph(), getSchedulingTopology(), finished),
                        id -> getExecutionVertex(id).getTaskNameWithSubtaskIndex());
        if (verdict.orphans() != null
                && lost.probeAgainBeforeFallback(
                        getExecutionGraph(), verdict.orphans(), this::restartPendingBatch)) {
            return;
        }
        pendingRestart.clear();
        if (!verdict.isLocal()) {
            globalFallbacks.count(verdict.fallback());
            String why = access.names(batch) + " locally: " + verdict.notLocal();
            log.warn(
                    "Cannot recover {}. Falling back to Flink's restart from the last checkpoint.",
                    why);
            handleGlobalFailure(new FlinkException("Clonos cannot recover " + why));
            return;
        }
        if (!verdict.restartAfresh().isEmpty()) {
            log.warn(
                    "{}; clonos.recovery.orphan-fallback is at-least-once: they restart without determinants, and their consumers may see their records twice.",
                    verdict.orphans());
            restartAfreshWith(verdict.restartAfresh(), batch, versions);
        }
        Set<ExecutionVertexID> finishedProducers = finished.toRestartWith(batch);
        if (!finishedProducers.isEmpty()) {
            log.info(
                    "{} finished before the checkpoint the batch restores and restart with it, finished on restore.",
                    access.names(finishedProducers));
            restartAfreshWith(finishedProducers, batch, versions);
        }
        // standbys to activate, and the standbys whose slot their replacements take
        Set<ExecutionVertexID> displaced = standbyCoordination.planActivations(batch);
        Set<ExecutionVertexVersion> displacedVersions =
                new HashSet<>(
                        executionVertexVersioner.recordVertexModifications(displaced).values());
        List<CompletableFuture<?>> gone = new ArrayList<>();
        for (ExecutionVertexID id : batch) {
            cancelAllPendingSlotRequestsForVertex(id);
            for (Execution execution : getExecutionVertex(id).getCurrentExecutions()) {
                gone.add(cancelExecution(execution));
            }
        }
        for (ExecutionVertexID id : displaced) {
            gone.add(cancelExecution(getExecutionVertex(id).getCurrentExecutionAttempt()));
        }
        FutureUtils.combineAll(gone)
                .whenCompleteAsync(
                        (ignored, failure) -> {
                            try {
                                localRestart.deploy(versions);
                                standbyCoordination.provisionAfterStart(batch, displacedVersions);
                            } catch (Throwable t) {
                                log.error(
                                        "Local recovery failed; falling back to Flink's restart.",
                                        t);
                                globalFallbacks.count(GlobalFallbackCounter.Reason.RESTART_FAILED);
                                handleGlobalFailure(t);
                            }
                        },
                        getMainThreadExecutor());
    }

    /**
     * Tasks that restart afresh with the batch, joining it if they are not part of it: with {@code
     * clonos.recovery.orphan-fallback: at-least-once}, the batch's orphans and those of earlier
     * recoveries; and the batch's finished producers, finished on restore ({@link
     * FinishedProducers}).
     */
    private void restartAfreshWith(
            Set<ExecutionVertexID> tasks,
            Set<ExecutionVertexID> batch,
            Set<ExecutionVertexVersion> versions) {
        Set<ExecutionVertexID> joining = new HashSet<>();
        for (ExecutionVertexID task : tasks) {
            markFresh(task);
            if (!batch.contains(task)) {
                joining.add(task);
            }
        }
        versions.addAll(executionVertexVersioner.recordVertexModifications(joining).values());
        batch.addAll(joining);
    }

    /** The scheduler as its collaborators see it; usable once the constructor returned. */
    SchedulerAccess access() {
        return access;
    }

    private final class Access implements SchedulerAccess {
        @Override
        public ExecutionGraph graph() {
            return getExecutionGraph();
        }

        @Override
        public ExecutionVertex vertex(ExecutionVertexID id) {
            return getExecutionVertex(id);
        }

        @Override
        public ComponentMainThreadExecutor mainThread() {
            return getMainThreadExecutor();
        }

        @Override
        public ExecutionVertexVersioner versioner() {
            return executionVertexVersioner;
        }

        @Override
        public CompletableFuture<?> cancel(Execution execution) {
            return cancelExecution(execution);
        }

        @Override
        public void resetForNewExecutions(Set<ExecutionVertexID> vertices) {
            ClonosScheduler.this.resetForNewExecutions(vertices);
        }

        @Override
        public void deploy(List<ExecutionVertexID> vertices) {
            allocateSlotsAndDeploy(vertices);
        }

        @Override
        public List<ExecutionVertexID> topologicalOrder(Set<ExecutionVertexID> ids) {
            return IterableUtils.toStream(getSchedulingTopology().getVertices())
                    .map(SchedulingExecutionVertex::getId)
                    .filter(ids::contains)
                    .collect(Collectors.toList());
        }

        @Override
        public void restoreEndOfData(Set<ExecutionVertexID> vertices) {
            ClonosEndOfDataPatch.restoreVertices(ClonosScheduler.this, vertices);
        }
    }
}
