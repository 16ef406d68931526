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

package io.clonos.runtime.inflightlog;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The memory of a TaskManager's in-flight logs keeps the arrays of dropped buffers for reuse. */
class InFlightLogMemoryTest {

    @Test
    void anArrayGivenBackIsTakenAgainWithinTheBudget() {
        InFlightLogMemory memory = new InFlightLogMemory(8192);
        byte[] full = memory.take(4096);
        assertThat(full).hasSize(4096);

        memory.give(full);
        assertThat(memory.keptBytes()).isEqualTo(4096);
        assertThat(memory.take(4096)).isSameAs(full);
        assertThat(memory.keptBytes()).isZero();

        byte[] odd = memory.take(100);
        assertThat(odd).hasSize(100);
        memory.give(odd);
        assertThat(memory.keptBytes()).as("a length that is not a power of two").isZero();
        memory.give(new byte[512]);
        assertThat(memory.keptBytes()).as("a length below the least kept").isZero();

        assertThat(memory.tryReserve(8192)).isTrue();
        memory.give(new byte[4096]);
        assertThat(memory.keptBytes())
                .as("kept arrays and reserved bytes stay within the budget")
                .isZero();
        memory.release(4096);
        memory.give(full);
        assertThat(memory.keptBytes()).isEqualTo(4096);
    }
}
