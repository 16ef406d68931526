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

package io.clonos.runtime.configuration;

import io.clonos.runtime.configuration.ClonosOptions.OrphanFallback;
import io.clonos.runtime.configuration.ClonosOptions.RecoveryMode;
import io.clonos.runtime.configuration.ClonosOptions.SpillPolicy;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClonosConfigurationTest {

    @Test
    void defaultsAreFullDepthLocalRecoveryWithoutStandbys() {
        ClonosConfiguration clonos = ClonosConfiguration.fromConfiguration(new Configuration());

        assertThat(clonos.getDeterminantSharingDepth()).isEqualTo(-1);
        assertThat(TaskSettings.of(clonos, true).causalLogging()).isTrue();
        assertThat(TaskSettings.of(clonos, false).causalLogging())
                .as("a job Clonos does not cover")
                .isFalse();
        assertThat(clonos.getRecoveryMode()).isEqualTo(RecoveryMode.LOCAL);
        assertThat(clonos.getOrphanFallback()).isEqualTo(OrphanFallback.GLOBAL_ROLLBACK);
        assertThat(clonos.isStandbyEnabled()).isFalse();
        assertThat(clonos.getRestartDelay().toString()).isEqualTo("immediate-unless-repeated");
        assertThat(clonos.getRestartDelay().millis(false, 1_000)).as("a first failure").isZero();
        assertThat(clonos.getRestartDelay().millis(true, 1_000))
                .as("a failure before the last recovery completed a checkpoint")
                .isEqualTo(1_000);
    }

    /** What the rewriter writes into a vertex is what its tasks read back, and nothing else. */
    @Test
    void taskSettingsTravelThroughAVertexConfiguration() {
        ClonosConfiguration clonos =
                ClonosConfiguration.fromConfiguration(
                        Configuration.fromMap(
                                Map.of(
                                        "clonos.determinant-sharing-depth", "1",
                                        "clonos.time-service.granularity", "7 ms",
                                        "clonos.determinant.memory", "3mb",
                                        "clonos.recovery.checkpoint-pause", "0 ms")));
        Configuration vertex = new Configuration();
        TaskSettings.of(clonos, true).writeTo(vertex);

        TaskSettings read = TaskSettings.readFrom(vertex);
        assertThat(read.determinantSharingDepth()).isEqualTo(1);
        assertThat(read.timeServiceGranularity()).hasMillis(7);
        assertThat(read.determinantMemory().getMebiBytes()).isEqualTo(3);
        assertThat(read.checkpointsWaitForReplays()).isFalse();
        assertThat(vertex.keySet()).allSatisfy(key -> assertThat(key).startsWith("clonos."));
    }

    @Test
    void readsDashedEnumSpellingsAndOtherValues() {
        ClonosConfiguration clonos =
                ClonosConfiguration.fromConfiguration(
                        Configuration.fromMap(
                                Map.of(
                                        "clonos.determinant-sharing-depth", "0",
                                        "clonos.recovery.mode", "global",
                                        "clonos.recovery.orphan-fallback", "at-least-once",
                                        "clonos.in-flight-log.spill-policy", "EAGER",
                                        "clonos.in-flight-log.memory", "128mb",
                                        "clonos.standby.count", "2",
                                        "clonos.recovery.restart-delay", "0 ms")));

        assertThat(clonos.getDeterminantSharingDepth()).isZero();
        assertThat(TaskSettings.of(clonos, true).causalLogging()).isFalse();
        assertThat(clonos.getRecoveryMode()).isEqualTo(RecoveryMode.GLOBAL);
        assertThat(clonos.getOrphanFallback()).isEqualTo(OrphanFallback.AT_LEAST_ONCE);
        assertThat(clonos.getSpillPolicy()).isEqualTo(SpillPolicy.EAGER);
        assertThat(clonos.getInFlightLogMemory().getMebiBytes()).isEqualTo(128);
        assertThat(clonos.getStandbyCount()).isEqualTo(2);
        assertThat(clonos.getRestartDelay().millis(true, 1_000)).isZero();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "clonos.determinant-sharing-depth | -2    | -1 (full depth)",
                "clonos.determinant-sharing-depth | deep  | -1 (full depth)",
                "clonos.recovery.mode             | fast  | one of local, global",
                "clonos.recovery.orphan-fallback  | retry | one of global-rollback, at-least-once",
                "clonos.in-flight-log.type        | disk  | one of spillable, in-memory",
                "clonos.in-flight-log.memory      | 0     | a positive memory size",
                "clonos.in-flight-log.memory      | lots  | a positive memory size",
                "clonos.in-flight-log.spill-trigger | 1.5 | greater than 0 and at most 1",
                "clonos.in-flight-log.spill-trigger | 0   | greater than 0 and at most 1",
                "clonos.in-flight-log.prefetch-buffers | 0 | at least 1",
                "clonos.standby.count             | 0     | at least 1",
                "clonos.standby.enabled           | maybe | true or false",
                "clonos.standby.placement         | random | one of spread, pack",
                "clonos.standby.transfer-wait     | -1 s  | 0 ms or more",
                "clonos.standby.redeploy-delay    | -1 s  | 0 ms or more",
                "clonos.recovery.restart-delay    | -1 ms | 0 ms or more",
                "clonos.recovery.restart-delay    | soon  | 0 ms or more",
                "clonos.determinant-sharing-hops  | some  | one of between-taskmanagers, every-task",
                "clonos.time-service.granularity  | -1 ms | 0 or more",
                "clonos.determinant.memory        | 0     | a positive memory size",
            })
    void badValueNamesKeyValueAndWhatIsAllowed(String key, String value, String allowed) {
        Configuration config = Configuration.fromMap(Map.of(key, value));

        assertThatThrownBy(() -> ClonosConfiguration.fromConfiguration(config))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'" + key + "'")
                .hasMessageContaining("'" + value + "'")
                .hasMessageContaining(allowed);
    }

    @Test
    void unknownClonosKeyIsRejectedWithTheKnownKeys() {
        Configuration config =
                Configuration.fromMap(Map.of("clonos.determinant-sharing-dept", "1"));

        assertThatThrownBy(() -> ClonosConfiguration.fromConfiguration(config))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'clonos.determinant-sharing-dept'")
                .hasMessageContaining("clonos.determinant-sharing-depth");
    }

    @Test
    void jobConfigurationOverridesTheCluster() {
        Configuration cluster =
                Configuration.fromMap(
                        Map.of(
                                "clonos.determinant-sharing-depth",
                                "1",
                                "clonos.recovery.mode",
                                "global"));
        Configuration job = Configuration.fromMap(Map.of("clonos.determinant-sharing-depth", "2"));

        ClonosConfiguration clonos = ClonosConfiguration.forJob(cluster, job);

        assertThat(clonos.getDeterminantSharingDepth()).isEqualTo(2);
        assertThat(clonos.getRecoveryMode()).isEqualTo(RecoveryMode.GLOBAL);
    }

    @Test
    void badJobValueIsRejected() {
        Configuration job = Configuration.fromMap(Map.of("clonos.recovery.mode", "sometimes"));

        assertThatThrownBy(() -> ClonosConfiguration.forJob(new Configuration(), job))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("clonos.recovery.mode");
    }

    @Test
    void aJobCannotChangeATaskManagerSetting() {
        Configuration cluster =
                Configuration.fromMap(Map.of("clonos.in-flight-log.spill-policy", "epoch"));

        assertThatThrownBy(
                        () ->
                                ClonosConfiguration.forJob(
                                        cluster,
                                        Configuration.fromMap(
                                                Map.of(
                                                        "clonos.in-flight-log.spill-policy",
                                                        "eager"))))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("clonos.in-flight-log.spill-policy")
                .hasMessageContaining("'eager'")
                .hasMessageContaining("TaskManager setting")
                .hasMessageContaining("'epoch'");
        assertThatThrownBy(
                        () ->
                                ClonosConfiguration.forJob(
                                        new Configuration(),
                                        Configuration.fromMap(
                                                Map.of("clonos.in-flight-log.memory", "1 gb"))))
                .hasMessageContaining("clonos.in-flight-log.memory");
        // the reconnect timeout is the TaskManager's: its channels and its recovering tasks wait
        // the same time
        assertThatThrownBy(
                        () ->
                                ClonosConfiguration.forJob(
                                        new Configuration(),
                                        Configuration.fromMap(
                                                Map.of(
                                                        "clonos.recovery.reconnect-timeout",
                                                        "5 s"))))
                .hasMessageContaining("clonos.recovery.reconnect-timeout")
                .hasMessageContaining("TaskManager setting");
        // the cluster's own value, or the default, restated by the job is fine
        assertThat(
                        ClonosConfiguration.forJob(
                                        cluster,
                                        Configuration.fromMap(
                                                Map.of(
                                                        "clonos.in-flight-log.spill-policy",
                                                        "epoch",
                                                        "clonos.in-flight-log.type",
                                                        "spillable")))
                                .getSpillPolicy())
                .isEqualTo(ClonosOptions.SpillPolicy.EPOCH);
    }

    @Test
    void everyOptionIsUnderThePrefixAndDocumented() {
        assertThat(ClonosOptions.all())
                .allSatisfy(
                        option -> {
                            assertThat(option.key()).startsWith(ClonosOptions.PREFIX);
                            assertThat(option.description().toString()).isNotBlank();
                        });
    }
}
