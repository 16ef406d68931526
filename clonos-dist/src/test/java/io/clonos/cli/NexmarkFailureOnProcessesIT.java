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

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code bin/clonos nexmark failure --processes separate}: Nexmark Q3 between Kafka topics on a
 * standalone Clonos cluster and a standalone vanilla Flink cluster of separate JVMs, the
 * TaskManager of the query's first subtask killed with SIGKILL. Clonos restarts only what ran
 * there, Flink the whole job; both write exactly the failure-free run's results through the
 * transactional Kafka sink.
 */
class NexmarkFailureOnProcessesIT {

    @TempDir Path work;

    @Test
    void q3RecoversASigkilledTaskManagerLocallyAndExactlyOnce() throws Exception {
        Path dist = Paths.get(System.getProperty("clonos.dist", "target/clonos")).toAbsolutePath();
        Path output = work.resolve("nexmark");
        List<String> command =
                List.of(
                        dist.resolve("bin/clonos").toString(),
                        "nexmark",
                        "failure",
                        "--query",
                        "3",
                        "--processes",
                        "separate",
                        "--rate",
                        "2000",
                        "--seconds",
                        "24",
                        "--kill-after",
                        "12",
                        "--output",
                        output.toString(),
                        "-D",
                        "rest.port=" + FreePorts.next(),
                        "-D",
                        "jobmanager.rpc.port=" + FreePorts.next());
        CliRun.Result result = CliRun.run(command, Duration.ofMinutes(3).plusSeconds(30));
        String stdout = result.stdout();
        assertThat(result.exitCode()).as(stdout).isZero();
        assertThat(stdout).contains("lost (SIGKILL)");

        JsonNode summary = new ObjectMapper().readTree(output.resolve("q3-summary.json").toFile());
        assertThat(summary.path("setup").path("processes").asText()).isEqualTo("separate");
        assertThat(summary.path("setup").path("failure").asText()).isEqualTo("SIGKILL");
        JsonNode clonos = run(summary, "clonos");
        JsonNode flink = run(summary, "flink");
        assertThat(clonos.path("exactlyOnce").asBoolean()).as("Clonos, exactly once").isTrue();
        assertThat(flink.path("exactlyOnce").asBoolean()).as("Flink, exactly once").isTrue();
        assertThat(clonos.path("local").asBoolean())
                .as(
                        "Clonos restarted only the lost TaskManager's subtasks (%s of %s)",
                        clonos.path("restartedSubtasks"), clonos.path("subtasks"))
                .isTrue();
        assertThat(flink.path("restartedSubtasks").asInt())
                .as("Flink restarts the whole job")
                .isEqualTo(flink.path("subtasks").asInt());
        for (String system : new String[] {"clonos", "flink"}) {
            assertThat(summary.path(system).path("detection_ms").asLong())
                    .as("%s: the JobManager recorded the SIGKILL's failure, after it", system)
                    .isNotNegative();
        }
    }

    /** The summary's one run of {@code system}. */
    private static JsonNode run(JsonNode summary, String system) {
        for (JsonNode run : summary.path("runs")) {
            if (run.path("system").asText().equals(system)) {
                return run;
            }
        }
        throw new AssertionError("No run of " + system + " in " + summary);
    }
}
