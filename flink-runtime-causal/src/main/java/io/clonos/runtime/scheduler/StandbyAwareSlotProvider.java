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
import org.apache.flink.runtime.jobmaster.SlotRequestId;
import org.apache.flink.runtime.jobmaster.slotpool.PhysicalSlotProvider;
import org.apache.flink.runtime.jobmaster.slotpool.PhysicalSlotRequest;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Flink's physical slot provider, whose requests for activated standbys' replacements prefer the
 * standbys' TaskManagers, and whose requests for standbys moved off their primaries' TaskManager
 * prefer the job's other TaskManagers.
 */
@Internal
final class StandbyAwareSlotProvider implements PhysicalSlotProvider {

    private final PhysicalSlotProvider flink;
    private final StandbyActivations activations;

    StandbyAwareSlotProvider(PhysicalSlotProvider flink, StandbyActivations activations) {
        this.flink = flink;
        this.activations = activations;
    }

    @Override
    public Map<SlotRequestId, CompletableFuture<PhysicalSlotRequest.Result>> allocatePhysicalSlots(
            Collection<PhysicalSlotRequest> requests) {
        List<PhysicalSlotRequest> steered = new ArrayList<>(requests.size());
        for (PhysicalSlotRequest request : requests) {
            steered.add(
                    new PhysicalSlotRequest(
                            request.getSlotRequestId(),
                            activations.steer(request.getSlotProfile()),
                            request.willSlotBeOccupiedIndefinitely()));
        }
        return flink.allocatePhysicalSlots(steered);
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
