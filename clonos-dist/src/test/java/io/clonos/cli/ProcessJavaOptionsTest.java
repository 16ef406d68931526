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
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ProcessJavaOptionsTest {

    @Test
    void theCommonOptionsComeFirstThenTheRolesAsFlinksScriptsOrderThem() {
        Configuration config =
                Configuration.fromMap(
                        Map.of(
                                "env.java.default-opts.all", "-Da=1",
                                "env.java.opts.all", " -Db=2   -Dc=3 ",
                                "env.java.default-opts.taskmanager", "-Dd=4",
                                "env.java.opts.taskmanager", "-De=5",
                                "env.java.opts.jobmanager", "-Df=6"));

        assertThat(ProcessJavaOptions.taskManager(config, Path.of("/log/taskmanager-0")))
                .containsExactly("-Da=1", "-Db=2", "-Dc=3", "-Dd=4", "-De=5");
        assertThat(ProcessJavaOptions.jobManager(config, Path.of("/log/jobmanager")))
                .containsExactly("-Da=1", "-Db=2", "-Dc=3", "-Df=6");
    }

    @Test
    void theLogPrefixIsTheProcesssLogFileWithoutItsExtension() {
        Configuration config =
                Configuration.fromMap(
                        Map.of(
                                "env.java.opts.taskmanager",
                                "-XX:StartFlightRecording=filename=${FLINK_LOG_PREFIX}.jfr"));

        assertThat(ProcessJavaOptions.taskManager(config, Path.of("/log/taskmanager-1")))
                .containsExactly("-XX:StartFlightRecording=filename=/log/taskmanager-1.jfr");
    }

    @Test
    void noneConfiguredIsNone() {
        assertThat(ProcessJavaOptions.taskManager(new Configuration(), Path.of("/log/tm")))
                .isEmpty();
    }

    /** The options reach the process's command line, before its main class. */
    @Test
    void aTaskManagersCommandCarriesThem(@TempDir Path home) throws Exception {
        Files.createDirectories(home.resolve("conf"));
        Files.writeString(home.resolve("conf").resolve("config.yaml"), "");
        StandaloneCluster cluster =
                new StandaloneCluster(
                        ClonosHome.fromEnvironment(Map.of("CLONOS_HOME", home.toString()), null),
                        System.out);

        List<String> taskManager =
                cluster.foregroundCommand(
                        "taskmanager", Map.of("env.java.opts.taskmanager", "-Dprobe=tm"));
        List<String> jobManager =
                cluster.foregroundCommand(
                        "jobmanager", Map.of("env.java.opts.taskmanager", "-Dprobe=tm"));

        assertThat(taskManager).contains("-Dprobe=tm");
        assertThat(taskManager.indexOf("-Dprobe=tm")).isLessThan(taskManager.indexOf("-cp"));
        assertThat(jobManager).doesNotContain("-Dprobe=tm");
    }
}
