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
import org.apache.flink.api.common.time.Time;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.checkpoint.JobManagerTaskRestore;
import org.apache.flink.runtime.clusterframework.types.AllocationID;
import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.clusterframework.types.ResourceProfile;
import org.apache.flink.runtime.clusterframework.types.SlotProfile;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.jobmaster.SlotInfo;
import org.apache.flink.runtime.jobmaster.SlotRequestId;
import org.apache.flink.runtime.jobmaster.slotpool.SlotPool;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.runtime.taskmanager.TaskManagerLocation;

import org.slf4j.Logger;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Activations of standbys in progress: a failed subtask whose standby holds local copies of its
 * state is deployed on the standby's TaskManager (its slot request prefers that location, {@link
 * #steer}) and restores from the copies ({@link #localize}). If the subtask ends up elsewhere it
 * restores from checkpoint storage as usual. JobManager main thread only, except the gauges.
 */
@Internal
public final class StandbyActivations {

    private final Logger log;

    /** The job's slot pool: its free slots, and spare slots for standbys that move. */
    private final SlotPool slotPool;

    /** Per slot a request was last in: the TaskManagers its next request prefers. */
    private final Map<AllocationID, List<TaskManagerLocation>> steered = new HashMap<>();

    private final Map<ExecutionVertexID, Activation> planned = new HashMap<>();
    private final Map<ExecutionAttemptID, Long> activating = new HashMap<>();
    private Counter activations;
    private volatile long lastActivationMillis = -1;

    public StandbyActivations(Logger log, SlotPool slotPool) {
        this.log = log;
        this.slotPool = slotPool;
    }

    /**
     * How many free slots the job has on {@code taskManager}: replacements that need no room made.
     */
    public int freeSlotsOn(ResourceID taskManager) {
        int free = 0;
        for (SlotInfo slot : slotPool.getFreeSlotInfoTracker().getFreeSlotsInformation()) {
            if (slot.getTaskManagerLocation().getResourceID().equals(taskManager)) {
                free++;
            }
        }
        return free;
    }

    /** Registers the figures: activations so far, and how long the last one took to run. */
    public void registerMetrics(MetricGroup metrics) {
        activations = metrics.counter("standbyActivations");
        metrics.gauge("standbyActivationTimeMs", (Gauge<Long>) () -> lastActivationMillis);
    }

    /**
     * The failed subtask {@code vertex}, last in the slot {@code priorAllocation}, is to replace
     * itself by the standby on {@code location} that holds {@code held}.
     */
    public void plan(
            ExecutionVertexID vertex,
            List<AllocationID> priorAllocations,
            TaskManagerLocation location,
            StandbyManager.Held held) {
        planned.put(vertex, new Activation(location, held, System.nanoTime()));
        for (AllocationID prior : priorAllocations) {
            steer(prior, List.of(location));
        }
    }

    /**
     * The next slot request of whoever was last in {@code priorAllocation} (a planned activation, a
     * standby being moved off its primary's TaskManager) prefers {@code locations}.
     */
    public void steer(AllocationID priorAllocation, List<TaskManagerLocation> locations) {
        steered.put(priorAllocation, locations);
    }

    /**
     * A new slot from the ResourceManager, on a TaskManager other than {@code avoided}, for
     * standbys that move off their primaries' TaskManager; asked for while they still hold their
     * slot, so that the ResourceManager cannot hand back that one (and the pool does not count it
     * as the new one). The slot is returned to the job's pool as a free slot: the standbys' next
     * request takes it when steered to its TaskManager. Empty if the ResourceManager offered a slot
     * on an avoided TaskManager only, or none in time. Main thread.
     */
    public CompletableFuture<Optional<TaskManagerLocation>> spareSlot(
            Set<ResourceID> avoided, Duration timeout) {
        SlotRequestId request = new SlotRequestId();
        return slotPool.requestNewAllocatedSlot(
                        request, ResourceProfile.UNKNOWN, Time.fromDuration(timeout))
                .handle(
                        (slot, failure) -> {
                            if (failure != null) {
                                return Optional.empty();
                            }
                            slotPool.releaseSlot(request, null);
                            TaskManagerLocation location = slot.getTaskManagerLocation();
                            return avoided.contains(location.getResourceID())
                                    ? Optional.<TaskManagerLocation>empty()
                                    : Optional.of(location);
                        });
    }

    /** Forgets the steering of {@code priorAllocation}, once its request was made. */
    public void unsteer(AllocationID priorAllocation) {
        steered.remove(priorAllocation);
    }

    /** A slot request steered by {@link #steer(AllocationID, List)} prefers its TaskManagers. */
    public SlotProfile steer(SlotProfile profile) {
        for (AllocationID prior : profile.getPreferredAllocations()) {
            List<TaskManagerLocation> locations = steered.get(prior);
            if (locations != null) {
                return SlotProfile.priorAllocation(
                        profile.getTaskResourceProfile(),
                        profile.getPhysicalSlotResourceProfile(),
                        locations,
                        profile.getPreferredAllocations(),
                        profile.getReservedAllocations());
            }
        }
        return profile;
    }

    /**
     * Before {@code execution} is deployed: if it is a planned activation and runs where its
     * standby holds the copies, its state is read from them.
     */
    public void localize(Execution execution) {
        Activation activation = planned.remove(execution.getVertex().getID());
        if (activation == null) {
            return;
        }
        JobManagerTaskRestore restore = execution.getTaskRestore();
        TaskManagerLocation location = execution.getAssignedResourceLocation();
        if (restore == null) {
            // no state to restore
            return;
        }
        if (location == null
                || !location.getResourceID().equals(activation.location().getResourceID())) {
            log.info(
                    "{} is deployed on {}, not on its standby's TaskManager {}: it restores from checkpoint storage.",
                    execution.getVertex().getTaskNameWithSubtaskIndex(),
                    location,
                    activation.location());
            return;
        }
        execution.setInitialState(
                new JobManagerTaskRestore(
                        restore.getRestoreCheckpointId(),
                        StateFiles.localize(
                                restore.getTaskStateSnapshot(), activation.held().copies())));
        activating.put(execution.getAttemptId(), activation.startedNanos());
        if (activations != null) {
            activations.inc();
        }
        long linked =
                StateFiles.incrementalHandles(restore.getTaskStateSnapshot()).stream()
                        .filter(
                                handle ->
                                        activation
                                                .held()
                                                .copies()
                                                .databases()
                                                .containsKey(handle.getStateHandleId()))
                        .count();
        log.info(
                "Activating the standby of {} on {}: checkpoint {} restored from the standby's copies of checkpoint {} ({} RocksDB instances linked from its directories).",
                execution.getVertex().getTaskNameWithSubtaskIndex(),
                location,
                restore.getRestoreCheckpointId(),
                activation.held().checkpointId(),
                linked);
    }

    /** An execution runs: if it was an activation, how long it took is the latest figure. */
    public void running(ExecutionAttemptID execution) {
        Long started = activating.remove(execution);
        if (started != null) {
            lastActivationMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        }
    }

    /**
     * The batch was deployed: its slot requests need no more steering. (Moves steer and unsteer
     * around their own request on the same thread, so none is pending here.)
     */
    public void deployed() {
        steered.clear();
    }

    private record Activation(
            TaskManagerLocation location, StandbyManager.Held held, long startedNanos) {}
}
