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

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.clusterframework.types.SlotProfile;
import org.apache.flink.runtime.jobmaster.SlotRequestId;
import org.apache.flink.runtime.jobmaster.slotpool.PhysicalSlotProvider;
import org.apache.flink.runtime.jobmaster.slotpool.PhysicalSlotRequest;
import org.apache.flink.runtime.jobmaster.slotpool.SlotPool;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Flink's physical slot provider, whose requests for activated standbys' replacements prefer the
 * standbys' TaskManagers, and whose requests for standbys moved off their primaries' TaskManager
 * get a new slot from the ResourceManager (the job's own free slot is the one they leave).
 */
@Internal
final class StandbyAwareSlotProvider implements PhysicalSlotProvider {

    private final PhysicalSlotProvider flink;
    private final SlotPool slotPool;
    private final StandbyActivations activations;

    StandbyAwareSlotProvider(PhysicalSlotProvider flink, SlotPool slotPool, StandbyActivations activations) {
        this.flink = flink;
        this.slotPool = slotPool;
        this.activations = activations;
    }

    @Override
    public Map<SlotRequestId, CompletableFuture<PhysicalSlotRequest.Result>> allocatePhysicalSlots(Collection<PhysicalSlotRequest> requests) {
        List<PhysicalSlotRequest> steered = new ArrayList<>(requests.size());
        Map<SlotRequestId, CompletableFuture<PhysicalSlotRequest.Result>> results = new HashMap<>();
        for (PhysicalSlotRequest request : requests) {
            SlotProfile profile = request.getSlotProfile();
            if (activations.isMove(profile)) {
                results.put(request.getSlotRequestId(),
                        slotPool.requestNewAllocatedSlot(request.getSlotRequestId(), profile.getPhysicalSlotResourceProfile(), List.of(), null)
                                .thenApply(slot -> new PhysicalSlotRequest.Result(request.getSlotRequestId(), slot)));
            } else {
                steered.add(new PhysicalSlotRequest(request.getSlotRequestId(), activations.steer(profile), request.willSlotBeOccupiedIndefinitely()));
            }
        }
        if (!steered.isEmpty()) {
            results.putAll(flink.allocatePhysicalSlots(steered));
        }
        return results;
    }

    @Override
    public void cancelSlotRequest(SlotRequestId slotRequestId, Throwable cause) {
        flink.cancelSlotRequest(slotRequestId, cause);
    }

    @Override
    public void disableBatchSlotRequestTimeoutCheck() {
        flink.disableBatchSlotRequestTimeoutCheck();
    }
}
