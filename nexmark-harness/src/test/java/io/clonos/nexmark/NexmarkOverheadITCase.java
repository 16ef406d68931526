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

package io.clonos.nexmark;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The overhead experiment, small: one query on the three systems, twice, each run cancelled after a
 * short warm-up and steady state, and the files it writes.
 */
class NexmarkOverheadITCase {

    @TempDir Path output;

    @Test
    void oneQueryOnEverySystemWithItsFigures() throws Exception {
        NexmarkOverhead.Settings settings = new NexmarkOverhead.Settings();
        settings.queries = List.of(1);
        settings.repetitions = 2;
        settings.warmupMillis = 2_000;
        settings.steadyMillis = 3_000;
        settings.output = output;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();

        List<NexmarkOverhead.Run> runs =
                new NexmarkOverhead(
                                settings, new PrintStream(printed, true, StandardCharsets.UTF_8))
                        .run();

        assertThat(runs)
                .extracting(NexmarkOverhead.Run::system)
                .containsExactlyElementsOf(NexmarkOverhead.SYSTEMS);
        // the generator is unbounded: each run was cancelled after its steady state, which its
        // figures cover (a window that ended early would mean the events stopped entering)
        assertThat(runs)
                .allMatch(run -> run.millis() > 2_500 && run.millis() <= 3_000, "3 s steady state");
        assertThat(runs).allMatch(run -> run.events() > 0 && run.eventsPerSecond() > 0);
        // Q1 converts every bid: results left in the steady state, each with a latency
        assertThat(runs).allMatch(run -> run.results() > 0);
        assertThat(runs).allMatch(run -> run.p50Ms() >= 0 && run.p99Ms() >= run.p50Ms());
        // the threads of the JVM (the cluster's among them) worked for the events
        assertThat(runs).allMatch(run -> run.cpuNsPerEvent() > 0);
        assertThat(runs)
                .allMatch(
                        run ->
                                run.cpuNsPerEventByThreads().keySet().stream()
                                        .anyMatch(group -> group.startsWith("task ")));
        assertThat(Files.readAllLines(output.resolve("overhead.csv")))
                .hasSize(4)
                .first()
                .asString()
                .startsWith("query,system,steady_seconds")
                .endsWith("determinant_bytes_per_event,cpu_ns_per_event");
        // Flink's tasks log no determinants; Clonos's are counted through Flink's metrics
        assertThat(runs.get(0).determinantBytesPerEvent()).isZero();
        assertThat(runs).allMatch(run -> run.determinantBytesPerEvent() >= 0);
        String json = Files.readString(output.resolve("overhead.json"));
        assertThat(json).contains("\"system\":\"clonos-dsd-1\"").contains("\"eventsPerSecondMin\"");
        // every run's figures, not only the medians
        assertThat(json.substring(json.indexOf("\"everyRun\"")).split("\"query\":1,")).hasSize(7);
        assertThat(Files.readString(output.resolve("overhead.html")))
                .contains("<svg")
                .contains("Q1");
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .contains("Q1")
                .contains("dsd-1/flink")
                .contains("run 2/2")
                .contains("lowest - highest")
                .contains("p50 / p99")
                .contains("CPU per event")
                .contains("Determinant bytes per event");
    }
}
