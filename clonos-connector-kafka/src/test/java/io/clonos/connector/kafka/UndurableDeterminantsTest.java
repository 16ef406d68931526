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

package io.clonos.connector.kafka;

import io.clonos.runtime.causal.CausalLogDelta;
import io.clonos.runtime.causal.CausalLogId;
import io.clonos.runtime.causal.SharedDelta;
import io.clonos.runtime.network.DeltaLists;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Carriers hold every determinant not yet durable, and only those. */
class UndurableDeterminantsTest {

    private static final CausalLogId LOG = CausalLogId.main("a", 0);

    private static SharedDelta delta(long offset, int length) {
        return new SharedDelta(new CausalLogDelta(LOG, 3, offset, new byte[length]), 1);
    }

    @Test
    void aCarrierHoldsWhatNoAcknowledgedCarrierHeld() throws Exception {
        UndurableDeterminants undurable = new UndurableDeterminants();
        assertThat(undurable.header()).isNull();
        undurable.add(List.of(delta(0, 4), delta(4, 2)));
        long first = undurable.lastIndex();
        assertThat(DeltaLists.fromBytes(undurable.header()))
                .containsExactly(delta(0, 4), delta(4, 2));
        undurable.add(List.of(delta(6, 3)));
        assertThat(undurable.bytes()).isEqualTo(9);
        // the first publication's carrier was acknowledged: what it held is durable
        undurable.durableUpTo(first);
        assertThat(DeltaLists.fromBytes(undurable.header())).containsExactly(delta(6, 3));
        assertThat(undurable.bytes()).isEqualTo(3);
        // an older acknowledgement arriving late changes nothing
        undurable.durableUpTo(first - 1);
        assertThat(undurable.bytes()).isEqualTo(3);
        undurable.durableUpTo(undurable.lastIndex());
        assertThat(undurable.header()).isNull();
        assertThat(undurable.bytes()).isZero();
    }
}
