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

package io.clonos.nexmark.failure;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The experiment's order of runs: a system that always ran first would have the cooler machine. */
class NexmarkFailureTest {

    @Test
    void theSystemsAlternateBetweenRepetitions() {
        assertThat(NexmarkFailure.order(0)).containsExactly("clonos", "flink");
        assertThat(NexmarkFailure.order(1)).containsExactly("flink", "clonos");
        assertThat(NexmarkFailure.order(2)).containsExactly("clonos", "flink");
    }
}
