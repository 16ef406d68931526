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

import io.clonos.cli.CliRun;
import io.clonos.cli.FreePorts;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code bin/clonos bench recovery --processes separate}: the same job on a standalone Clonos
 * cluster and on a standalone vanilla Flink cluster of separate JVMs, a TaskManager killed with
 * SIGKILL under each. Clonos restarts only the lost TaskManager's subtasks, Flink restarts the job;
 * neither loses a record.
 *
 * <p>The input lasts 10 s, the kill comes after 2 s: the records of a processing-time window that
 * has not fired when the input ends never reach the sink (Flink does not fire processing-time
 * timers at the end of input), and the benchmark excuses only the last second of each source's
 * records. With 6 s of input, a recovery of 4-5 s on a loaded machine ended as the input did, and
 * records the recovered window task caught up on in its last window counted as lost (13 in one
 * run).
 */
class SeparateProcessRecoveryIT {

    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path work;

    @Test
    void clonosRecoversTheLostSliceWhereFlinkRestartsTheJob() throws Exception {
        Path dist = Paths.get(System.getProperty("clonos.dist", "target/clonos")).toAbsolutePath();
        Path output = work.resolve("recovery");
        List<String> command =
                List.of(
                        dist.resolve("bin/clonos").toString(),
                        "bench",
                        "recovery",
                        "--processes",
                        "separate",
                        "--records",
                        "15000",
                        "--rate",
                        "1500",
                        "--checkpoint-interval",
                        "500",
                        "--kill-after",
                        "2000",
                        "--output",
                        output.toString(),
                        "-D",
                        "rest.port=" + FreePorts.next(),
                        "-D",
                        "jobmanager.rpc.port=" + FreePorts.next());
        CliRun.Result result = CliRun.run(command, Duration.ofMinutes(3).plusSeconds(30));
        String stdout = result.stdout();
        assertThat(result.exitCode()).as(stdout).isZero();

        JsonNode summary = new ObjectMapper().readTree(output.resolve("summary.json").toFile());
        assertThat(summary.path("setup").path("processes").asText()).isEqualTo("separate");
        assertThat(summary.path("runs")).hasSize(2);
        assertThat(Files.readString(output.resolve("recovery.html")))
                .as("the timelines of both systems, side by side")
                .contains("<svg", ">clonos<", ">flink<");
        for (JsonNode run : summary.path("runs")) {
            String system = run.path("system").asText();
            int subtasks = run.path("subtasks").asInt();
            int restarted = run.path("subtasks_restarted").asInt();
            assertThat(run.path("figures").path("lost").asLong()).as(system + " lost").isZero();
            assertThat(run.path("figures").path("duplicated").asLong())
                    .as(system + " duplicated: the sink commits with checkpoints")
                    .isZero();
            assertThat(run.path("detection_ms").asLong())
                    .as(system + " learnt of the loss")
                    .isNotNegative();
            for (String phase : List.of("restart", "scheduling", "deployment", "restore")) {
                assertThat(run.path("breakdown").path(phase + "_ms").asLong())
                        .as(system + "'s replacement attempt went through " + phase)
                        .isNotNegative();
            }
            if (system.equals("clonos")) {
                assertThat(restarted)
                        .as("Clonos restarts the lost slice")
                        .isBetween(1, subtasks - 1);
            } else {
                assertThat(system).isEqualTo("flink");
                assertThat(restarted).as("Flink restarts the job").isEqualTo(subtasks);
            }
        }
    }
}
