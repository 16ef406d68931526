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
import io.clonos.runtime.configuration.ClonosOptions;
import io.clonos.runtime.standby.StandbyActivations;
import io.clonos.runtime.standby.StandbyManager;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.clusterframework.types.AllocationID;
import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.executiongraph.ExecutionGraph;
import org.apache.flink.runtime.executiongraph.ExecutionVertex;
import org.apache.flink.runtime.scheduler.ExecutionVertexVersion;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.runtime.taskmanager.TaskManagerLocation;
import org.apache.flink.util.IterableUtils;
import org.apache.flink.util.concurrent.FutureUtils;

import org.slf4j.Logger;

import javax.annotation.Nullable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;
import java.util.stream.Collectors;

/**
 * The scheduler's dealings with standby tasks: where a failed subtask's replacement goes to find
 * its standby's copies of the state, how long a batch waits for a standby still fetching the
 * checkpoint, which standbys make room, and moving a standby off its primary's TaskManager. Kept
 * apart from the scheduler, which only restarts what it is told to; all of it runs on the
 * JobManager's main thread.
 */
@Internal
final class StandbyCoordination {

    /**
     * How long a standby that failed or found no slot waits before it is tried again: long enough
     * that a cluster without room for standbys is not asked every moment.
     */
    static final Duration STANDBY_RETRY = Duration.ofSeconds(10);

    /** How long a standby that moves off its primary's TaskManager waits for a new slot. */
    static final Duration SPARE_SLOT_TIMEOUT = Duration.ofSeconds(10);

    /**
     * How long a standby that moves off its new primary's TaskManager waits after that primary, a
     * replacement, runs: the replacement's replay has the JobManager and the TaskManagers to itself
     * first.
     */
    static final Duration STANDBY_PROVISION_DELAY = Duration.ofSeconds(1);

    /** A standby that did not get off its primary's TaskManager in this many tries stays. */
    private static final int MOVE_TRIES = 2;

    private final ClonosConfiguration clonos;
    private final StandbyManager standbys;
    private final StandbyActivations activations;
    private final SchedulerAccess scheduling;
    private final Logger log;

    private final Map<ExecutionVertexID, Integer> moves = new HashMap<>();
    private final Set<AllocationID> movingSlots = new HashSet<>();

    /** Replacements that new standbys wait for, and what completes once they run. */
    private final Map<ExecutionAttemptID, CompletableFuture<?>> awaitedRunning = new HashMap<>();

    /**
     * When the pending batch stops waiting for standbys' transfers (System.nanoTime), -1 if it does
     * not wait.
     */
    private long transferWaitDeadline = -1;

    /** What runs the waiting batch again, when a standby reports its copies or the wait ends. */
    @Nullable private Runnable retry;

    StandbyCoordination(
            ClonosConfiguration clonos,
            StandbyManager standbys,
            StandbyActivations activations,
            SchedulerAccess scheduling,
            Logger log) {
        this.clonos = clonos;
        this.standbys = standbys;
        this.activations = activations;
        this.scheduling = scheduling;
        this.log = log;
        standbys.onFetched(
                () ->
                        scheduling
                                .mainThread()
                                .execute(
                                        () -> {
                                            if (transferWaitDeadline >= 0 && retry != null) {
                                                retry.run();
                                            }
                                        }));
    }

    /**
     * A standby that failed, or found no slot (a cluster without room for standbys): the job runs
     * without it, and it is tried again after {@link #STANDBY_RETRY}. Not a failure of the job: the
     * restart strategy does not count it.
     */
    void standbyFailed(Execution failed, @Nullable Throwable error) {
        ExecutionVertexID id = failed.getVertex().getID();
        log.warn(
                "{} cannot stand by ({}); the job runs without it, and it is tried again in {} s.",
                failed.getVertex().getTaskNameWithSubtaskIndex(),
                error == null ? "unknown cause" : error.toString(),
                STANDBY_RETRY.toSeconds());
        Set<ExecutionVertexVersion> versions =
                new HashSet<>(
                        scheduling.versioner().recordVertexModifications(Set.of(id)).values());
        scheduling
                .mainThread()
                .schedule(
                        () -> redeployStandbys(versions),
                        STANDBY_RETRY.toMillis(),
                        TimeUnit.MILLISECONDS);
    }

    /**
     * Whether the batch waits for standbys that are fetching the checkpoint it restores, up to
     * {@code clonos.standby.transfer-wait} from its first call: a standby that finishes its
     * transfer saves its replacement reading those files from checkpoint storage. {@code retry} is
     * run when a standby of the batch reports its copies and when the wait is over.
     */
    boolean awaitingTransfers(Set<ExecutionVertexID> batch, Runnable retry) {
        long latest =
                standbys.latestCheckpoint().map(CompletedCheckpoint::getCheckpointID).orElse(-1L);
        List<ExecutionVertexID> fetching =
                batch.stream()
                        .filter(
                                id ->
                                        latest >= 0
                                                && standbys.fetching(scheduling.vertex(id), latest))
                        .collect(Collectors.toList());
        long wait = clonos.getStandbyTransferWait().toMillis();
        if (fetching.isEmpty() || wait == 0) {
            transferWaitDeadline = -1;
            return false;
        }
        long now = System.nanoTime();
        this.retry = retry;
        if (transferWaitDeadline < 0) {
            transferWaitDeadline = now + TimeUnit.MILLISECONDS.toNanos(wait);
            log.info(
                    "The replacements of {} wait up to {} ms for their standbys to finish fetching checkpoint {} (clonos.standby.transfer-wait).",
                    scheduling.names(fetching),
                    wait,
                    latest);
            long deadline = transferWaitDeadline;
            scheduling
                    .mainThread()
                    .schedule(
                            () -> {
                                if (transferWaitDeadline == deadline) {
                                    retry.run();
                                }
                            },
                            wait,
                            TimeUnit.MILLISECONDS);
            return true;
        }
        if (now < transferWaitDeadline) {
            return true;
        }
        transferWaitDeadline = -1;
        log.warn(
                "The standbys of {} did not finish fetching checkpoint {} within {} ms (clonos.standby.transfer-wait): their replacements read the rest from checkpoint storage.",
                scheduling.names(fetching),
                latest,
                wait);
        return false;
    }

    /**
     * Once the replacements of {@code batch} run (or ended: a replacement that fails before it runs
     * must not leave the standbys undeployed, or the job could never finish), and {@code
     * clonos.standby.redeploy-delay} after that, deploys new standbys for the ones whose slots they
     * took. Not as soon as the replacements are deployed: a new standby fetches its primary's whole
     * state from checkpoint storage, and on the TaskManager of a replacement that restores its own
     * (its standby's copy) that fetch competes with the restore for the CPU and the disk.
     */
    void provisionAfterStart(Set<ExecutionVertexID> batch, Set<ExecutionVertexVersion> displaced) {
        if (displaced.isEmpty()) {
            return;
        }
        List<CompletableFuture<?>> running = new ArrayList<>();
        List<ExecutionAttemptID> replacements = new ArrayList<>();
        for (ExecutionVertexID id : batch) {
            Execution replacement = scheduling.vertex(id).getCurrentExecutionAttempt();
            replacements.add(replacement.getAttemptId());
            CompletableFuture<?> runs =
                    replacement.getState() == ExecutionState.RUNNING
                            ? CompletableFuture.completedFuture(null)
                            : awaitedRunning.computeIfAbsent(
                                    replacement.getAttemptId(),
                                    attempt -> new CompletableFuture<>());
            running.add(CompletableFuture.anyOf(runs, replacement.getTerminalStateFuture()));
        }
        FutureUtils.combineAll(running)
                .whenCompleteAsync(
                        (ran, notRunning) -> {
                            replacements.forEach(awaitedRunning::remove);
                            scheduling
                                    .mainThread()
                                    .schedule(
                                            () -> redeployStandbys(displaced),
                                            clonos.getStandbyRedeployDelay().toMillis(),
                                            TimeUnit.MILLISECONDS);
                        },
                        scheduling.mainThread());
    }

    /** Runs {@code provision} (moving standbys) {@link #STANDBY_PROVISION_DELAY} from now. */
    private void provisionLater(Runnable provision) {
        scheduling
                .mainThread()
                .schedule(provision, STANDBY_PROVISION_DELAY.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * An attempt reached {@code state} (running or finished): the standbys learn it, and with
     * {@code clonos.standby.placement: spread} the standbys on the attempt's TaskManager move off
     * it (after a replacement's recovery, if the attempt is one next to its standby).
     */
    void attemptReached(Execution execution, ExecutionState state) {
        standbys.taskFinishedOrStarted(execution.getVertex());
        if (state != ExecutionState.RUNNING) {
            return;
        }
        activations.running(execution.getAttemptId());
        CompletableFuture<?> awaited = awaitedRunning.remove(execution.getAttemptId());
        if (awaited != null) {
            awaited.complete(null);
        }
        if (clonos.getStandbyPlacement() == ClonosOptions.StandbyPlacement.SPREAD) {
            List<ExecutionVertex> coLocated = standbys.coLocatedStandbys(execution.getVertex());
            if (execution.getAttemptNumber() > 0 && !coLocated.isEmpty()) {
                // a replacement next to its standby (an activation): it recovers first
                provisionLater(() -> coLocated.forEach(this::moveOffPrimary));
            } else {
                coLocated.forEach(this::moveOffPrimary);
            }
        }
    }

    /**
     * Moves a standby off its primary's TaskManager ({@code clonos.standby.placement: spread}),
     * with the standbys that share its slot. Flink has no anti-affinity, so the slot is got first:
     * a new one from the ResourceManager, asked for while the standbys still hold theirs (a request
     * made after would be handed the slot they just freed). If it lies on another TaskManager, the
     * standbys are cancelled and their new attempts' slot request prefers that TaskManager; if the
     * ResourceManager has none elsewhere, they move to a free slot of the job's elsewhere if there
     * is one. After {@link #MOVE_TRIES} tries a standby stays, and the log says so. Not a failure:
     * the restart strategy does not count it.
     */
    private void moveOffPrimary(ExecutionVertex standby) {
        Execution current = standby.getCurrentExecutionAttempt();
        AllocationID slot = current.getAssignedAllocationID();
        if (slot == null || !movingSlots.add(slot)) {
            return;
        }
        if (moves.getOrDefault(standby.getID(), 0) >= MOVE_TRIES) {
            log.warn(
                    "{} runs on the same TaskManager as its primary and no other TaskManager took it (clonos.standby.placement: spread); "
                            + "losing that TaskManager loses both.",
                    standby.getTaskNameWithSubtaskIndex());
            return;
        }
        ExecutionGraph graph = scheduling.graph();
        Set<ExecutionVertexID> moved = new HashSet<>();
        Set<ResourceID> avoid = new HashSet<>();
        for (ExecutionVertex vertex : graph.getAllExecutionVertices()) {
            Execution execution = vertex.getCurrentExecutionAttempt();
            if (slot.equals(execution.getAssignedAllocationID())
                    && !execution.getState().isTerminal()) {
                moved.add(vertex.getID());
                moves.merge(vertex.getID(), 1, Integer::sum);
                standbys.primaryOf(vertex)
                        .map(
                                primary ->
                                        primary.getCurrentExecutionAttempt()
                                                .getAssignedResourceLocation())
                        .ifPresent(location -> avoid.add(location.getResourceID()));
            }
        }
        List<TaskManagerLocation> others =
                IterableUtils.toStream(graph.getAllExecutionVertices())
                        .map(v -> v.getCurrentExecutionAttempt().getAssignedResourceLocation())
                        .filter(
                                location ->
                                        location != null
                                                && !avoid.contains(location.getResourceID()))
                        .distinct()
                        .collect(Collectors.toList());
        Set<ExecutionVertexVersion> versions =
                new HashSet<>(scheduling.versioner().recordVertexModifications(moved).values());
        activations
                .spareSlot(avoid, SPARE_SLOT_TIMEOUT)
                .whenCompleteAsync(
                        (spare, noSpare) -> {
                            Set<ExecutionVertexID> stillThere =
                                    scheduling.versioner().getUnmodifiedExecutionVertices(versions);
                            if (stillThere.isEmpty()
                                    || scheduling.graph().getState() != JobStatus.RUNNING) {
                                movingSlots.remove(slot);
                                return;
                            }
                            List<TaskManagerLocation> targets =
                                    spare != null && spare.isPresent()
                                            ? List.of(spare.get())
                                            : others;
                            log.info(
                                    "Moving {} off the TaskManagers of their primaries (clonos.standby.placement: spread), to {}.",
                                    scheduling.names(stillThere),
                                    spare != null && spare.isPresent()
                                            ? "a new slot on " + spare.get()
                                            : "a free slot of the job's elsewhere, if there is one (the ResourceManager offered none elsewhere)");
                            List<CompletableFuture<?>> gone = new ArrayList<>();
                            for (ExecutionVertexID id : stillThere) {
                                gone.add(
                                        scheduling.cancel(
                                                scheduling
                                                        .vertex(id)
                                                        .getCurrentExecutionAttempt()));
                            }
                            FutureUtils.combineAll(gone)
                                    .whenCompleteAsync(
                                            (ignored, failure) -> {
                                                movingSlots.remove(slot);
                                                activations.steer(slot, targets);
                                                try {
                                                    redeployStandbys(versions);
                                                } finally {
                                                    activations.unsteer(slot);
                                                }
                                            },
                                            scheduling.mainThread());
                        },
                        scheduling.mainThread());
    }

    /**
     * Failed subtasks whose standbys hold copies of their state are to be deployed where the copies
     * are. A free slot of the job's on the standby's TaskManager takes the replacement at once;
     * where the TaskManager has too few, the replacements take the standbys' slots: returns the
     * standbys running in those, which make room (their copies stay until the next standby of their
     * subtask holds a checkpoint). A standby that did not make room is moved off its new primary's
     * TaskManager once that runs, like any co-located standby.
     */
    Set<ExecutionVertexID> planActivations(Set<ExecutionVertexID> batch) {
        Map<ResourceID, Set<AllocationID>> standbySlots = new HashMap<>();
        Map<ResourceID, Set<AllocationID>> requests = new HashMap<>();
        for (ExecutionVertexID id : batch) {
            ExecutionVertex vertex = scheduling.vertex(id);
            standbys.activationFor(vertex)
                    .ifPresent(
                            standby -> {
                                Optional<AllocationID> prior = vertex.findLastAllocation();
                                activations.plan(
                                        id,
                                        prior.map(List::of).orElse(List.of()),
                                        standby.location(),
                                        standby.held());
                                ResourceID taskManager = standby.location().getResourceID();
                                standbySlots
                                        .computeIfAbsent(taskManager, tm -> new HashSet<>())
                                        .add(standby.slot());
                                // the batch's subtasks that shared a slot share their replacement's
                                // slot request
                                requests.computeIfAbsent(taskManager, tm -> new HashSet<>())
                                        .add(prior.orElseGet(AllocationID::new));
                            });
        }
        Set<AllocationID> slots = slotsToTake(standbySlots, requests, activations::freeSlotsOn);
        Set<ExecutionVertexID> displaced = new HashSet<>();
        for (ExecutionVertex vertex : scheduling.graph().getAllExecutionVertices()) {
            Execution execution = vertex.getCurrentExecutionAttempt();
            if (!batch.contains(vertex.getID())
                    && !execution.getState().isTerminal()
                    && slots.contains(execution.getAssignedAllocationID())) {
                displaced.add(vertex.getID());
            }
        }
        return displaced;
    }

    /**
     * The standbys' slots the replacements take: all of those on a TaskManager with fewer free
     * slots than the replacements that go there ask for, none elsewhere.
     *
     * @param standbySlots per TaskManager, the slots of the standbys the replacements activate
     * @param requests per TaskManager, the replacements' slot requests (one per shared slot)
     */
    static Set<AllocationID> slotsToTake(
            Map<ResourceID, Set<AllocationID>> standbySlots,
            Map<ResourceID, Set<AllocationID>> requests,
            ToIntFunction<ResourceID> freeSlots) {
        Set<AllocationID> slots = new HashSet<>();
        standbySlots.forEach(
                (taskManager, taken) -> {
                    if (freeSlots.applyAsInt(taskManager) < requests.get(taskManager).size()) {
                        slots.addAll(taken);
                    }
                });
        return slots;
    }

    /** Deploys new attempts of the standbys whose versions are still current. */
    private void redeployStandbys(Set<ExecutionVertexVersion> versions) {
        Set<ExecutionVertexID> ids =
                scheduling.versioner().getUnmodifiedExecutionVertices(versions);
        if (!ids.isEmpty() && scheduling.graph().getState() == JobStatus.RUNNING) {
            scheduling.resetForNewExecutions(ids);
            scheduling.deploy(new ArrayList<>(ids));
        }
    }
}
