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
 * The overhead experiment, small: one query on the three systems, twice, and the files it writes.
 */
class NexmarkOverheadITCase {

    @TempDir Path output;

    @Test
    void oneQueryOnEverySystemWithItsFigures() throws Exception {
        NexmarkOverhead.Settings settings = new NexmarkOverhead.Settings();
        settings.events = 5_000;
        settings.queries = List.of(1);
        settings.repetitions = 2;
        settings.output = output;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();

        List<NexmarkOverhead.Run> runs =
                new NexmarkOverhead(
                                settings, new PrintStream(printed, true, StandardCharsets.UTF_8))
                        .run();

        assertThat(runs)
                .extracting(NexmarkOverhead.Run::system)
                .containsExactlyElementsOf(NexmarkOverhead.SYSTEMS);
        // Q1 converts every bid: as many results on every system
        assertThat(runs)
                .extracting(NexmarkOverhead.Run::results)
                .allMatch(results -> results > 0)
                .containsOnly(runs.get(0).results());
        assertThat(runs).allMatch(run -> run.eventsPerSecond() > 0);
        // every Q1 result is a converted bid: each has a latency
        assertThat(runs).allMatch(run -> run.p50Ms() >= 0 && run.p99Ms() >= run.p50Ms());
        assertThat(Files.readAllLines(output.resolve("overhead.csv")))
                .hasSize(4)
                .first()
                .asString()
                .startsWith("query,system")
                .endsWith("latency_p50_ms,latency_p99_ms,determinant_bytes_per_event");
        // Flink's tasks log no determinants; Clonos's are counted through Flink's metrics
        assertThat(runs.get(0).determinantBytesPerEvent()).isZero();
        assertThat(runs).allMatch(run -> run.determinantBytesPerEvent() >= 0);
        assertThat(Files.readString(output.resolve("overhead.json")))
                .contains("\"system\":\"clonos-dsd-1\"");
        assertThat(Files.readString(output.resolve("overhead.html")))
                .contains("<svg")
                .contains("Q1");
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .contains("Q1")
                .contains("dsd-1/flink")
                .contains("run 2/2")
                .contains("p50 / p99")
                .contains("Determinant bytes per event");
    }
}
