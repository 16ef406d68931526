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

package io.clonos.runtime.standby;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.runtime.checkpoint.CheckpointCoordinator;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.TaskStateSnapshot;
import org.apache.flink.runtime.clusterframework.types.AllocationID;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.executiongraph.ExecutionGraph;
import org.apache.flink.runtime.executiongraph.ExecutionJobVertex;
import org.apache.flink.runtime.executiongraph.ExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.operators.coordination.CoordinationRequest;
import org.apache.flink.runtime.operators.coordination.CoordinationResponse;
import org.apache.flink.runtime.taskmanager.TaskManagerLocation;
import org.apache.flink.util.FlinkException;
import org.apache.flink.util.SerializedValue;

import org.slf4j.Logger;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The JobManager's side of the standby tasks of one job: it answers their requests for their
 * primaries' state, keeps what each standby holds, tells standbys to end when their primaries
 * finished, and reports the figures ({@code clonos.standbys}, {@code clonos.standbyStateLag}). Main
 * thread only, except the gauges.
 */
@Internal
public final class StandbyManager {

    private final Supplier<ExecutionGraph> graph;
    private final Logger log;

    /** Per standby subtask (vertex, subtask): what its current attempt holds. */
    private final Map<StandbySubtask, Held> held = new HashMap<>();

    private final StandbySecrets secrets = new StandbySecrets();

    private volatile long latestCompleted = -1;
    private volatile int holding;
    private volatile long oldestHeld = -1;
    private Runnable onFetched = () -> {};

    public StandbyManager(Supplier<ExecutionGraph> graph, MetricGroup metrics, Logger log) {
        this.graph = graph;
        this.log = log;
        metrics.gauge("standbys", (Gauge<Integer>) () -> holding);
        metrics.gauge(
                "standbyStateLag",
                (Gauge<Long>)
                        () ->
                                oldestHeld < 0 || latestCompleted < 0
                                        ? -1
                                        : latestCompleted - oldestHeld);
        metrics.gauge("standbysMissing", (Gauge<Integer>) this::missing);
    }

    /** Whether {@code request} is a standby's; {@link #answer} handles those. */
    public static boolean isStandbyRequest(CoordinationRequest request) {
        return request instanceof StandbyMessages.StateRequest
                || request instanceof StandbyMessages.Fetched;
    }

    /**
     * Answers a standby's request; refuses one that does not carry the secret of an attempt of the
     * standby it names ({@link StandbySecrets}), or whose local copies lie outside that attempt's
     * own directory.
     */
    public CoordinationResponse answer(CoordinationRequest request) throws FlinkException {
        if (request instanceof StandbyMessages.StateRequest state) {
            authenticate(state.standbyVertex(), state.standbySubtask(), state.secret());
            return stateOfPrimary(state);
        }
        StandbyMessages.Fetched fetched = (StandbyMessages.Fetched) request;
        // the secret says which attempt sent it
        int attempt =
                authenticate(fetched.standbyVertex(), fetched.standbySubtask(), fetched.secret())
                        .getAttemptNumber();
        String directory =
                StandbyTask.directoryName(
                        fetched.standbyVertex(), fetched.standbySubtask(), attempt);
        if (!fetched.copies().liesIn(graph.get().getJobID().toHexString(), directory)) {
            throw refused(
                    "copies of a standby of "
                            + fetched.standbyVertex()
                            + " must lie in its attempt's own directory "
                            + directory);
        }
        StandbySubtask standby =
                new StandbySubtask(fetched.standbyVertex(), fetched.standbySubtask());
        ExecutionJobVertex vertex = graph.get().getJobVertex(fetched.standbyVertex());
        Execution current =
                vertex == null
                        ? null
                        : vertex.getTaskVertices()[fetched.standbySubtask()]
                                .getCurrentExecutionAttempt();
        if (current != null
                && current.getAttemptNumber() == attempt
                && current.getState() == ExecutionState.RUNNING) {
            held.put(standby, new Held(attempt, fetched.checkpointId(), fetched.copies()));
            updateFigures();
            onFetched.run();
            return new StandbyMessages.Noted(true);
        }
        // a standby being cancelled: a replacement may restore from its older copies
        return new StandbyMessages.Noted(false);
    }

    private ExecutionAttemptID authenticate(JobVertexID vertex, int subtask, String secret)
            throws FlinkException {
        return secrets.attemptOf(secret, vertex, subtask)
                .orElseThrow(
                        () ->
                                refused(
                                        "the request for subtask "
                                                + subtask
                                                + " of standby vertex "
                                                + vertex
                                                + " does not carry the secret of one of its attempts"));
    }

    private FlinkException refused(String why) {
        log.warn(
                "Refused a standby request (REST clients cannot send them; a standby gets its secret from the JobManager): {}.",
                why);
        return new FlinkException("Refused a standby request: " + why);
    }

    private StandbyMessages.StateResponse stateOfPrimary(StandbyMessages.StateRequest request) {
        Optional<ExecutionVertex> primary =
                primaryOf(request.standbyVertex(), request.standbySubtask());
        if (primary.isEmpty() || primary.get().getExecutionState() == ExecutionState.FINISHED) {
            return new StandbyMessages.StateResponse(-1, null, true);
        }
        CompletedCheckpoint latest = latestCheckpoint().orElse(null);
        if (latest == null) {
            return new StandbyMessages.StateResponse(-1, null, false);
        }
        latestCompleted = latest.getCheckpointID();
        updateFigures();
        if (latest.getCheckpointID() < request.completedCheckpointId()) {
            // the standby holds it already
            return new StandbyMessages.StateResponse(latest.getCheckpointID(), null, false);
        }
        TaskStateSnapshot snapshot = new TaskStateSnapshot();
        int subtask = primary.get().getParallelSubtaskIndex();
        for (OperatorIDPair ids : primary.get().getJobVertex().getOperatorIDs()) {
            OperatorID operator = ids.getGeneratedOperatorID();
            OperatorState state = latest.getOperatorStates().get(operator);
            OperatorSubtaskState subtaskState = state == null ? null : state.getState(subtask);
            if (subtaskState != null) {
                snapshot.putSubtaskStateByOperatorID(operator, subtaskState);
            }
        }
        return new StandbyMessages.StateResponse(latest.getCheckpointID(), snapshot, false);
    }

    /** The job's latest completed checkpoint, if any (and readable). */
    public Optional<CompletedCheckpoint> latestCheckpoint() {
        CheckpointCoordinator coordinator = graph.get().getCheckpointCoordinator();
        try {
            return Optional.ofNullable(
                    coordinator == null
                            ? null
                            : coordinator.getCheckpointStore().getLatestCheckpoint());
        } catch (Exception e) {
            log.warn("Cannot read the latest completed checkpoint.", e);
            return Optional.empty();
        }
    }

    /**
     * A task finished: the standbys of a finished primary end; a standby of a finished primary that
     * starts ends too.
     */
    public void taskFinishedOrStarted(ExecutionVertex vertex) {
        Optional<JobVertexID> primaryVertex =
                StandbyVertices.primaryOf(vertex.getJobVertex().getJobVertex());
        if (primaryVertex.isPresent()) {
            giveOrForgetSecret(vertex.getCurrentExecutionAttempt());
            Optional<ExecutionVertex> primary =
                    primaryOf(vertex.getJobvertexId(), vertex.getParallelSubtaskIndex());
            if (primary.isPresent()
                    && primary.get().getExecutionState() == ExecutionState.FINISHED) {
                finish(vertex.getCurrentExecutionAttempt());
            }
            return;
        }
        if (vertex.getExecutionState() != ExecutionState.FINISHED) {
            return;
        }
        for (ExecutionVertex standby : standbysOf(vertex)) {
            finish(standby.getCurrentExecutionAttempt());
        }
    }

    /** A standby attempt that runs gets its secret; one that finished forgets it. */
    private void giveOrForgetSecret(Execution standby) {
        if (standby.getState() == ExecutionState.FINISHED) {
            secrets.forget(standby.getAttemptId());
            return;
        }
        if (standby.getState() != ExecutionState.RUNNING) {
            return;
        }
        try {
            standby.sendOperatorEvent(
                    OperatorID.fromJobVertexID(standby.getVertex().getJobvertexId()),
                    new SerializedValue<>(
                            new StandbyMessages.Credentials(secrets.of(standby.getAttemptId()))));
        } catch (IOException e) {
            log.warn(
                    "Cannot give {} its secret; it cannot fetch state.",
                    standby.getVertex().getTaskNameWithSubtaskIndex(),
                    e);
        }
    }

    private void finish(Execution standby) {
        if (standby.getState() != ExecutionState.RUNNING) {
            // one that is not running yet asks for its primary's state at the next checkpoint and
            // ends then
            return;
        }
        try {
            standby.sendOperatorEvent(
                    OperatorID.fromJobVertexID(standby.getVertex().getJobvertexId()),
                    new SerializedValue<>(new StandbyMessages.Finish()));
        } catch (IOException e) {
            log.warn(
                    "Cannot tell {} to end.", standby.getVertex().getTaskNameWithSubtaskIndex(), e);
        }
    }

    /** The standby subtasks of the primary subtask {@code primary}. */
    private List<ExecutionVertex> standbysOf(ExecutionVertex primary) {
        List<ExecutionVertex> standbys = new ArrayList<>();
        for (ExecutionJobVertex standby : graph.get().getVerticesTopologically()) {
            if (StandbyVertices.primaryOf(standby.getJobVertex())
                    .filter(primary.getJobvertexId()::equals)
                    .isEmpty()) {
                continue;
            }
            for (ExecutionVertex subtask : standby.getTaskVertices()) {
                if (StandbyVertices.primarySubtask(
                                subtask.getParallelSubtaskIndex(),
                                primary.getJobVertex().getParallelism())
                        == primary.getParallelSubtaskIndex()) {
                    standbys.add(subtask);
                }
            }
        }
        return standbys;
    }

    private Optional<ExecutionVertex> primaryOf(JobVertexID standbyVertex, int standbySubtask) {
        ExecutionJobVertex standby = graph.get().getJobVertex(standbyVertex);
        if (standby == null) {
            return Optional.empty();
        }
        return StandbyVertices.primaryOf(standby.getJobVertex())
                .map(id -> graph.get().getJobVertex(id))
                .map(
                        primary ->
                                primary.getTaskVertices()[
                                        StandbyVertices.primarySubtask(
                                                standbySubtask, primary.getParallelism())]);
    }

    /** Standby subtasks that should run but do not (no slot, failed, being moved). */
    private int missing() {
        ExecutionGraph current = graph.get();
        if (current == null || current.getState() != JobStatus.RUNNING) {
            return 0;
        }
        int missing = 0;
        for (ExecutionJobVertex vertex : current.getVerticesTopologically()) {
            if (StandbyVertices.primaryOf(vertex.getJobVertex()).isPresent()) {
                for (ExecutionVertex subtask : vertex.getTaskVertices()) {
                    ExecutionState state = subtask.getExecutionState();
                    if (state != ExecutionState.RUNNING && state != ExecutionState.FINISHED) {
                        missing++;
                    }
                }
            }
        }
        return missing;
    }

    private void updateFigures() {
        int count = 0;
        long oldest = Long.MAX_VALUE;
        for (Map.Entry<StandbySubtask, Held> entry : held.entrySet()) {
            ExecutionJobVertex vertex = graph.get().getJobVertex(entry.getKey().vertex());
            if (vertex != null
                    && vertex.getTaskVertices()[entry.getKey().subtask()]
                                    .getCurrentExecutionAttempt()
                                    .getAttemptNumber()
                            == entry.getValue().attempt()) {
                count++;
                oldest = Math.min(oldest, entry.getValue().checkpointId());
            }
        }
        holding = count;
        oldestHeld = count == 0 ? -1 : oldest;
    }

    /**
     * The standby to activate for the failed subtask {@code primary}: a running one of the current
     * attempt that holds copies of its state (of the newest checkpoint, if several do), and where
     * it runs.
     */
    public Optional<Standby> activationFor(ExecutionVertex primary) {
        Standby best = null;
        for (ExecutionVertex standby : standbysOf(primary)) {
            Execution execution = standby.getCurrentExecutionAttempt();
            Held copies =
                    held.get(
                            new StandbySubtask(
                                    standby.getJobvertexId(), standby.getParallelSubtaskIndex()));
            if (execution.getState() == ExecutionState.RUNNING
                    && copies != null
                    && copies.attempt() == execution.getAttemptNumber()
                    && execution.getAssignedResourceLocation() != null
                    && (best == null || copies.checkpointId() > best.held().checkpointId())) {
                best =
                        new Standby(
                                execution.getAssignedResourceLocation(),
                                execution.getAssignedAllocationID(),
                                copies);
            }
        }
        return Optional.ofNullable(best);
    }

    /**
     * Whether the standby {@link #activationFor} picks for {@code primary} holds an older
     * checkpoint than {@code checkpointId}: it is fetching that one (standbys ask for each
     * completed checkpoint as it completes).
     */
    public boolean fetching(ExecutionVertex primary, long checkpointId) {
        return activationFor(primary)
                .map(standby -> standby.held().checkpointId() < checkpointId)
                .orElse(false);
    }

    /**
     * {@code listener} runs (on the main thread) whenever a standby reports the copies it holds.
     */
    public void onFetched(Runnable listener) {
        this.onFetched = listener;
    }

    /**
     * The standbys that run on the same TaskManager as their primary, now that {@code running} (a
     * primary or a standby) runs; with {@code clonos.standby.placement: spread} they move.
     */
    public List<ExecutionVertex> coLocatedStandbys(ExecutionVertex running) {
        List<ExecutionVertex> coLocated = new ArrayList<>();
        Optional<JobVertexID> primaryVertex =
                StandbyVertices.primaryOf(running.getJobVertex().getJobVertex());
        if (primaryVertex.isPresent()) {
            primaryOf(running.getJobvertexId(), running.getParallelSubtaskIndex())
                    .filter(primary -> sameTaskManager(primary, running))
                    .ifPresent(primary -> coLocated.add(running));
            return coLocated;
        }
        for (ExecutionVertex standby : standbysOf(running)) {
            if (sameTaskManager(running, standby)) {
                coLocated.add(standby);
            }
        }
        return coLocated;
    }

    private static boolean sameTaskManager(ExecutionVertex a, ExecutionVertex b) {
        Execution first = a.getCurrentExecutionAttempt();
        Execution second = b.getCurrentExecutionAttempt();
        return first.getState() == ExecutionState.RUNNING
                && second.getState() == ExecutionState.RUNNING
                && first.getAssignedResourceLocation() != null
                && second.getAssignedResourceLocation() != null
                && first.getAssignedResourceLocation()
                        .getResourceID()
                        .equals(second.getAssignedResourceLocation().getResourceID());
    }

    /** The primary subtask of a standby subtask. */
    public Optional<ExecutionVertex> primaryOf(ExecutionVertex standby) {
        return primaryOf(standby.getJobvertexId(), standby.getParallelSubtaskIndex());
    }

    /** A standby to activate: where it runs and what it holds. */
    public record Standby(TaskManagerLocation location, AllocationID slot, Held held) {}

    /** What the standby subtask's current attempt holds, if any (for activation and tests). */
    public Optional<Held> held(JobVertexID standbyVertex, int subtask) {
        return Optional.ofNullable(held.get(new StandbySubtask(standbyVertex, subtask)));
    }

    private record StandbySubtask(JobVertexID vertex, int subtask) {}

    /** The local copies a standby attempt holds of a checkpoint's files. */
    public record Held(int attempt, long checkpointId, LocalCopies copies) {}
}
