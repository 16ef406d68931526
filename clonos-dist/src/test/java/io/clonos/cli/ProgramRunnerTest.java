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
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class ProgramRunnerTest {

    @Test
    void aJobCarriesTheClonosSettingsOfItsCommandLineNotThoseOfTheConfigurationFile() {
        Configuration client =
                Configuration.fromMap(
                        Map.of(
                                "clonos.in-flight-log.memory", "64mb",
                                "clonos.determinant-sharing-depth", "-1",
                                "clonos.recovery.mode", "global",
                                "parallelism.default", "2"));

        Configuration job = ProgramRunner.jobConfiguration(client, Set.of("clonos.recovery.mode"));

        assertThat(job.toMap())
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of("clonos.recovery.mode", "global", "parallelism.default", "2"));
    }
}
