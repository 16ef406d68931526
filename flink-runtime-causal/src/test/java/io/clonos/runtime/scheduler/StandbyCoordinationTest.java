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

import org.apache.flink.runtime.clusterframework.types.AllocationID;
import org.apache.flink.runtime.clusterframework.types.ResourceID;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Which standbys make room for the replacements that activate them. */
class StandbyCoordinationTest {

    private final ResourceID full = ResourceID.generate();
    private final ResourceID roomy = ResourceID.generate();
    private final AllocationID standbyOnFull = new AllocationID();
    private final AllocationID standbyOnRoomy = new AllocationID();

    @Test
    void replacementsTakeTheStandbysSlotsOnlyWhereTheTaskManagerHasTooFewFreeOnes() {
        Map<ResourceID, Set<AllocationID>> standbySlots =
                Map.of(full, Set.of(standbyOnFull), roomy, Set.of(standbyOnRoomy));
        // two replacements (two slot requests) go to each TaskManager
        Map<ResourceID, Set<AllocationID>> requests =
                Map.of(
                        full,
                        Set.of(new AllocationID(), new AllocationID()),
                        roomy,
                        Set.of(new AllocationID(), new AllocationID()));
        Map<ResourceID, Integer> free = Map.of(full, 1, roomy, 2);

        assertThat(StandbyCoordination.slotsToTake(standbySlots, requests, free::get))
                .containsExactly(standbyOnFull);
    }

    @Test
    void replacementsThatShareASlotAskForOne() {
        AllocationID shared = new AllocationID();
        Map<ResourceID, Set<AllocationID>> standbySlots = Map.of(full, Set.of(standbyOnFull));
        Map<ResourceID, Set<AllocationID>> requests = Map.of(full, Set.of(shared));
        assertThat(StandbyCoordination.slotsToTake(standbySlots, requests, tm -> 1)).isEmpty();
        assertThat(StandbyCoordination.slotsToTake(standbySlots, requests, tm -> 0))
                .containsExactly(standbyOnFull);
    }
}
