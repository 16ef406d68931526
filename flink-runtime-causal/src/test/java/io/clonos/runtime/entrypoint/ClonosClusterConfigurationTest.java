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

package io.clonos.runtime.entrypoint;

import io.clonos.runtime.shuffle.ClonosShuffleServiceFactory;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.shuffle.ShuffleServiceOptions;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClonosClusterConfigurationTest {

    @Test
    void installsClonosShuffleServiceAndFixedBufferSizes() {
        Configuration user = new Configuration();
        user.set(TaskManagerOptions.BUFFER_DEBLOAT_ENABLED, true);

        Configuration prepared = ClonosClusterConfiguration.prepare(user);

        assertThat(prepared.get(ShuffleServiceOptions.SHUFFLE_SERVICE_FACTORY_CLASS))
                .isEqualTo(ClonosShuffleServiceFactory.class.getName());
        assertThat(prepared.get(TaskManagerOptions.BUFFER_DEBLOAT_ENABLED)).isFalse();
        assertThat(user.get(TaskManagerOptions.BUFFER_DEBLOAT_ENABLED))
                .as("the user's configuration is not modified")
                .isTrue();
    }

    @Test
    void rejectsAnotherShuffleService() {
        Configuration user = new Configuration();
        user.set(ShuffleServiceOptions.SHUFFLE_SERVICE_FACTORY_CLASS, "com.example.RemoteShuffle");

        assertThatThrownBy(() -> ClonosClusterConfiguration.prepare(user))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("shuffle-service-factory.class")
                .hasMessageContaining("com.example.RemoteShuffle")
                .hasMessageContaining(ClonosShuffleServiceFactory.class.getName());
    }

    @Test
    void rejectsBadClonosValue() {
        Configuration user = Configuration.fromMap(Map.of("clonos.standby.placement", "anywhere"));

        assertThatThrownBy(() -> ClonosClusterConfiguration.prepare(user))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("clonos.standby.placement");
    }

    @Test
    void rejectsTheAdaptiveSchedulerNamingTheKey() {
        Configuration user = Configuration.fromMap(Map.of("jobmanager.scheduler", "adaptive"));

        assertThatThrownBy(() -> ClonosClusterConfiguration.prepare(user))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("jobmanager.scheduler")
                .hasMessageContaining("Adaptive");
    }

    @Test
    void rejectsReactiveModeNamingTheKey() {
        Configuration user = Configuration.fromMap(Map.of("scheduler-mode", "reactive"));

        assertThatThrownBy(() -> ClonosClusterConfiguration.prepare(user))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("scheduler-mode")
                .hasMessageContaining("REACTIVE");
    }

    @Test
    void acceptsFlinksDefaultSchedulerNamedExplicitly() {
        Configuration user = Configuration.fromMap(Map.of("jobmanager.scheduler", "default"));

        assertThat(ClonosClusterConfiguration.prepare(user).get(JobManagerOptions.SCHEDULER))
                .isEqualTo(JobManagerOptions.SchedulerType.Default);
    }
}
