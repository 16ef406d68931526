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

package io.clonos.bench.report;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FailurePlanTest {

    /** Subtask names as Flink's REST API gives them, to the TaskManager that runs each. */
    private static Map<String, String> placement(String... pairs) {
        Map<String, String> placement = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            placement.put(pairs[i], pairs[i + 1]);
        }
        return placement;
    }

    @Test
    void victimsAreTheProcessesOfTheVertexsFirstSubtasksEachOnce() {
        Map<String, String> placement =
                placement(
                        "stateful-map[3]", "tm-d",
                        "source[0]", "tm-z",
                        "stateful-map[1]", "tm-a",
                        "stateful-map[0]", "tm-b",
                        "stateful-map[2]", "tm-a",
                        "stateful-map-2[0]", "tm-y",
                        "stateful-map[10]", "tm-c",
                        "stateful-map[11]", "tm-e");

        assertThat(FailurePlan.ONE.victims(placement, "stateful-map")).containsExactly("tm-b");
        assertThat(FailurePlan.CONCURRENT.victims(placement, "stateful-map"))
                .as("subtask 2 shares tm-a with subtask 1; subtask 10 comes after 3")
                .containsExactly("tm-b", "tm-a", "tm-d");
        assertThat(FailurePlan.STAGGERED.victims(placement, "stateful-map"))
                .containsExactly("tm-b", "tm-a", "tm-d");
    }

    @Test
    void aPlanThatLeavesNoSliceIsRefusedNamingTheOptions() {
        Map<String, String> placement =
                placement(
                        "stateful-map[0]", "tm-a",
                        "stateful-map[1]", "tm-b",
                        "stateful-map[2]", "tm-c",
                        "stateful-map[3]", "tm-c");

        assertThat(FailurePlan.ONE.victims(placement, "stateful-map")).containsExactly("tm-a");
        assertThatThrownBy(() -> FailurePlan.STAGGERED.victims(placement, "stateful-map"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("kills 3 TaskManagers")
                .hasMessageContaining("its 4 subtasks run on 3")
                .hasMessageContaining("no slice of the job would survive")
                .hasMessageContaining("--parallelism")
                .hasMessageContaining("--taskmanagers");
    }

    @Test
    void staggeredKillsComeFiveSecondsApartConcurrentOnesAtOnce() {
        assertThat(FailurePlan.STAGGERED.offsetMs(2)).isEqualTo(10_000);
        assertThat(FailurePlan.CONCURRENT.offsetMs(2)).isZero();
        assertThat(FailurePlan.parse("--failures", "staggered")).isSameAs(FailurePlan.STAGGERED);
        assertThatThrownBy(() -> FailurePlan.parse("--failures", "Staggered"))
                .hasMessage("--failures takes one, concurrent or staggered, not 'Staggered'.");
    }
}
