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

package io.clonos.runtime.network;

import io.clonos.runtime.causal.LocalRecoveryImpossibleException;

import org.junit.jupiter.api.Test;

import static io.clonos.runtime.network.GateItems.barrier;
import static io.clonos.runtime.network.GateItems.data;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What a restored task's connection lets through of its producer's replay. */
class RestoredCheckpointFilterTest {

    @Test
    void aReplayFromBeforeTheRestoredCheckpointIsSkippedThroughItsBarrier() {
        RestoredCheckpointFilter filter = new RestoredCheckpointFilter("task", 0, false);
        filter.start(3, 5);
        assertThat(filter.passes(data(0, 10))).isFalse();
        assertThat(filter.passes(barrier(0, 4))).isFalse();
        assertThat(filter.passes(data(0, 10))).isFalse();
        assertThat(filter.passes(barrier(0, 5)))
                .as("the restored checkpoint's own barrier")
                .isFalse();
        assertThat(filter.passes(data(0, 10))).isTrue();
        assertThat(filter.passes(barrier(0, 6))).isTrue();
    }

    @Test
    void aReplayFromTheRestoredCheckpointOrFromTheProducersStartPassesWhole() {
        RestoredCheckpointFilter fromRestored = new RestoredCheckpointFilter("task", 0, false);
        fromRestored.start(5, 5);
        assertThat(fromRestored.passes(data(0, 10))).isTrue();

        RestoredCheckpointFilter fromStart = new RestoredCheckpointFilter("task", 0, false);
        fromStart.start(ReplayStartEvent.FROM_PRODUCER_START, 5);
        assertThat(fromStart.passes(data(0, 10))).isTrue();

        RestoredCheckpointFilter notRestored = new RestoredCheckpointFilter("task", 0, false);
        notRestored.start(3, ClonosInputGate.NOT_RESTORED);
        assertThat(notRestored.passes(data(0, 10))).isTrue();
    }

    @Test
    void aReplacementConnectionIsNeverFiltered() {
        RestoredCheckpointFilter filter = new RestoredCheckpointFilter("task", 0, true);
        filter.start(3, 5);
        assertThat(filter.isReplacement()).isTrue();
        assertThat(filter.passes(data(0, 10))).isTrue();
    }

    @Test
    void aReplayThatStartsTooLateCannotBeUsed() {
        RestoredCheckpointFilter filter = new RestoredCheckpointFilter("task", 2, false);
        assertThatThrownBy(() -> filter.start(7, 5))
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("Channel 2 of task was restored from checkpoint 5")
                .hasMessageContaining("only from epoch 7");
    }

    @Test
    void aReplayThatPassesTheRestoredBarrierWithoutItCannotBeUsed() {
        RestoredCheckpointFilter filter = new RestoredCheckpointFilter("task", 0, false);
        filter.start(3, 5);
        assertThatThrownBy(() -> filter.passes(barrier(0, 6)))
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("skipped barrier 5");
    }
}
