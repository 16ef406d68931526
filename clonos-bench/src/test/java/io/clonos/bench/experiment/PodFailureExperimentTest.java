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

package io.clonos.bench.experiment;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PodFailureExperimentTest {

    @Test
    void theVictimRunsTheChainButNotTheSink() {
        Map<String, String> hosts =
                Map.of(
                        "chain -> window[0]", "tm-0",
                        "chain -> window[1]", "tm-1",
                        "Sink: sink[0]", "tm-0",
                        "Source: left[1]", "tm-2");
        assertThat(PodFailureExperiment.victim(hosts)).isEqualTo("tm-1");
    }

    @Test
    void aClusterWhoseChainRunsBesideTheSinkOnlyIsRefusedWithTheRemedy() {
        Map<String, String> hosts =
                Map.of(
                        "chain -> window[0]", "tm-0",
                        "chain -> window[1]", "tm-0",
                        "Sink: sink[0]", "tm-0",
                        "Source: left[0]", "tm-1");
        assertThatThrownBy(() -> PodFailureExperiment.victim(hosts))
                .hasMessageContaining("cluster.evenly-spread-out-slots");
    }
}
