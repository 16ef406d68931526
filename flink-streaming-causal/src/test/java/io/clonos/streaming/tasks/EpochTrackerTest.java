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

package io.clonos.streaming.tasks;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class EpochTrackerTest {

    @Test
    void startsInTheRestoredEpochAndMovesForward() {
        EpochTracker epochs = EpochTracker.startingAt(7);
        assertThat(epochs.currentEpoch()).isEqualTo(7);

        epochs.startEpoch(8);
        epochs.startEpoch(10);

        assertThat(epochs.currentEpoch()).isEqualTo(10);
    }

    @Test
    void aLateTriggerOfAnOlderCheckpointDoesNotGoBack() {
        EpochTracker epochs = EpochTracker.startingAt(0);
        epochs.startEpoch(5);

        epochs.startEpoch(4);

        assertThat(epochs.currentEpoch()).isEqualTo(5);
    }
}
