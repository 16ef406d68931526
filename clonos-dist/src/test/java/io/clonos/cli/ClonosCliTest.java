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

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ClonosCliTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return ClonosCli.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void unknownCommandIsAUsageError() {
        assertThat(run("deploy")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("Unknown command 'deploy'")
                .contains("Usage: clonos");
    }

    @Test
    void badOptionValueIsAUsageError() {
        assertThat(run("cluster", "start", "--taskmanagers", "zero")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("--taskmanagers needs an integer of at least 1, got 'zero'");
        err.reset();
        assertThat(run("hdfs", "--port", "nine")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("--port needs an integer of at least 0, got 'nine'");
    }

    @Test
    void benchWithoutTheBenchmarksOnTheClassPathSaysWhereTheyAre() {
        assertThat(run("bench", "overhead")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("bin/clonos bench runs them with the distribution's opt/bench");
    }

    @Test
    void runWithoutJarIsAUsageError() {
        assertThat(run("run", "--detached")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("run needs a job jar");
    }

    @Test
    void clusterStartWithBadClonosValueFailsBeforeStartingAnything(@TempDir Path conf)
            throws Exception {
        Files.writeString(
                conf.resolve("config.yaml"), "clonos:\n  in-flight-log:\n    spill-trigger: 2.0\n");

        assertThat(run("cluster", "start", "--conf-dir", conf.toString())).isEqualTo(1);

        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("'clonos.in-flight-log.spill-trigger'")
                .contains("'2.0'")
                .contains("at most 1");
    }

    @Test
    void helpOfEveryCommandPrintsUsageAndSucceeds() {
        for (String[] command :
                List.of(
                        new String[] {"--help"},
                        new String[] {"cluster", "--help"},
                        new String[] {"cluster", "start", "-h"},
                        new String[] {"run", "--help"},
                        new String[] {"demo", "--help"},
                        new String[] {"fail", "--help"},
                        new String[] {"chaos", "--help"},
                        new String[] {"process", "taskmanager", "--help"})) {
            out.reset();
            assertThat(run(command)).as(String.join(" ", command)).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8)).contains("cluster start");
        }
        assertThat(ClonosCli.asksForHelp(new String[] {"run", "job.jar", "--help"}))
                .as("--help after the jar is the job's argument")
                .isFalse();
    }

    @Test
    void helpPrintsUsage() {
        assertThat(run("help")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("cluster start").contains("demo");
    }
}
