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
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FailureClustersTest {

    @Test
    void embeddedClustersAreTheHarnessOwn() {
        FailureClusters clusters = FailureClusters.named("embedded");

        assertThat(clusters.name()).isEqualTo("embedded");
        assertThat(clusters.failure()).isEqualTo("terminated");
    }

    /**
     * The harness alone has no launcher of separate processes: that comes with the distribution.
     */
    @Test
    void anUnknownKindIsRejectedNamingTheOption() {
        assertThatThrownBy(() -> FailureClusters.named("separate"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--processes")
                .hasMessageContaining("separate");
        assertThatThrownBy(() -> FailureClusters.named("docker"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("docker");
    }
}
