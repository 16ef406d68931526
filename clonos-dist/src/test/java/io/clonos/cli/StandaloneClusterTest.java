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
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;

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

        assertThat(StandaloneCluster.withInFlightLogHeap(FLINKS, config, spec(config)))
                .isEqualTo(
                        "-Xmx"
                                + (536870902L + (100L << 20))
                                + " -Xms"
                                + (536870902L + (100L << 20))
                                + " -XX:MaxDirectMemorySize=268435458 -XX:MaxMetaspaceSize=268435456");
    }

    /** A full in-memory log takes what is queued ahead of a barrier beyond its budget. */
    @Test
    void anInMemoryLogsOverdraftOfTheNetworkMemoryCountsToo() {
        Configuration config =
                Configuration.fromMap(
                        Map.of(
                                "clonos.in-flight-log.memory", "100mb",
                                "clonos.in-flight-log.type", "in-memory"));
        long network = spec(config).getNetworkMemSize().getBytes();
        assertThat(network).isPositive();

        assertThat(StandaloneCluster.withInFlightLogHeap(FLINKS, config, spec(config)))
                .startsWith("-Xmx" + (536870902L + (100L << 20) + network) + " ");
    }

    @Test
    void withoutInFlightLogsTheHeapIsFlinks() {
        Configuration config =
                Configuration.fromMap(Map.of("clonos.in-flight-log.type", "disabled"));

        assertThat(StandaloneCluster.withInFlightLogHeap(FLINKS, config, spec(config)))
                .isEqualTo(FLINKS);
    }

    private static TaskExecutorProcessSpec spec(Configuration clonos) {
        Configuration config = new Configuration(clonos);
        config.setString("taskmanager.memory.process.size", "1g");
        return TaskExecutorProcessUtils.processSpecFromConfig(config);
    }
}
