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

package io.clonos.nexmark.failure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A run's figures computed again from its result times: a level before the failure taken after a
 * slow start-up shows the recovery that a window reaching into the start-up hides.
 */
class RecomputedFiguresTest {

    @TempDir Path dir;

    @Test
    void aWindowWithinTheSettledPartShowsTheRecovery() throws Exception {
        // 60 s of start-up at 10 s latency, 40 s settled at 100 ms, the failure at 0: 5 s at 2 s
        // latency, then settled again
        List<String> lines =
                new ArrayList<>(List.of("appended_ms_since_kill,due_ms_since_kill,partition"));
        for (long due = -100_000; due < 30_000; due += 50) {
            long latency = due < -40_000 ? 10_000 : due >= 0 && due < 5_000 ? 2_000 : 100;
            lines.add((due + latency) + "," + due + ",0");
        }
        Files.write(dir.resolve("synthetic-outputs-clonos-0.csv"), lines);
        ByteArrayOutputStream printed = new ByteArrayOutputStream();

        RecomputedFigures.write(
                dir, 90_000, new PrintStream(printed, true, StandardCharsets.UTF_8));
        String wide = Files.readString(dir.resolve("synthetic-figures.json"));
        RecomputedFigures.write(
                dir, 30_000, new PrintStream(printed, true, StandardCharsets.UTF_8));
        String settled = Files.readString(dir.resolve("synthetic-figures.json"));

        assertThat(wide)
                .as("the start-up's 10 s latency widens the bound over the failure's 2 s")
                .contains("\"baseline_ms\":90000")
                .contains("\"clonos\":{\"recovery_ms\":0,");
        assertThat(settled).contains("\"baseline_ms\":30000").contains("\"baselineLatencyMs\":100");
        long recovery =
                Long.parseLong(
                        settled.replaceAll("(?s).*\"clonos\":\\{\"recovery_ms\":(\\d+),.*", "$1"));
        assertThat(recovery)
                .as("back in bounds about 5 s after the failure")
                .isBetween(4_500L, 5_500L);
        assertThat(printed.toString(StandardCharsets.UTF_8)).contains("clonos-0");
    }

    @Test
    void aDirectoryWithoutResultTimesIsRefused() {
        assertThatThrownBy(() -> RecomputedFigures.write(dir, 30_000, System.out))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no <query>-outputs-<run>.csv");
    }
}
