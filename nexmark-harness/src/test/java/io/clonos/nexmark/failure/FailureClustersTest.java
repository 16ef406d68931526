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

import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FailureClustersTest {

    @Test
    void embeddedClustersAreTheHarnessOwn() {
        FailureClusters clusters = FailureClusters.named("embedded", List.of());

        assertThat(clusters.name()).isEqualTo("embedded");
        assertThat(clusters.failure()).isEqualTo("terminated");
    }

    /**
     * The harness alone has no launcher of separate processes: that comes with the distribution.
     */
    @Test
    void anUnknownKindIsRejectedNamingTheOption() {
        assertThatThrownBy(() -> FailureClusters.named("separate", List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--processes")
                .hasMessageContaining("separate");
        assertThatThrownBy(() -> FailureClusters.named("docker", List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("docker");
    }

    /** The caller's clusters (the distribution's separate processes) are chosen by their name. */
    @Test
    void theCallersClustersAreChosenByName() {
        FailureClusters other =
                new FailureClusters() {
                    @Override
                    public String name() {
                        return "separate";
                    }

                    @Override
                    public String failure() {
                        return "SIGKILL";
                    }

                    @Override
                    public Cluster start(
                            boolean onClonos,
                            Configuration config,
                            int taskManagers,
                            int slots,
                            Path dir) {
                        throw new UnsupportedOperationException();
                    }
                };

        assertThat(FailureClusters.named("separate", List.of(other))).isSameAs(other);
        assertThat(FailureClusters.named("embedded", List.of(other)).name()).isEqualTo("embedded");
    }
}
