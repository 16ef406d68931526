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
package io.clonos.cli;

import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class StandaloneClusterTest {

    private static final String FLINKS =
            "-Xmx536870902 -Xms536870902 -XX:MaxDirectMemorySize=268435458 -XX:MaxMetaspaceSize=268435456";

    @Test
    void aClonosTaskManagersHeapHoldsItsInFlightLogsOnTopOfFlinksSizing() {
        Configuration config =
                Configuration.fromMap(Map.of("clonos.in-flight-log.memory", "100mb"));

        assertThat(StandaloneCluster.withInFlightLogHeap(FLINKS, config))
                .isEqualTo(
                        "-Xmx"
                                + (536870902L + (100L << 20))
                                + " -Xms"
                                + (536870902L + (100L << 20))
                                + " -XX:MaxDirectMemorySize=268435458 -XX:MaxMetaspaceSize=268435456");
    }

    @Test
    void withoutInFlightLogsTheHeapIsFlinks() {
        Configuration config =
                Configuration.fromMap(Map.of("clonos.in-flight-log.type", "disabled"));

        assertThat(StandaloneCluster.withInFlightLogHeap(FLINKS, config)).isEqualTo(FLINKS);
    }
}
