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

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The overhead benchmark runs each system in a JVM of its own and gathers the figures. */
class OverheadBenchmarkTest {

    @TempDir Path output;

    private OverheadBenchmark.Settings settings(OverheadBenchmark.Variant... variants) {
        OverheadBenchmark.Settings settings = new OverheadBenchmark.Settings();
        settings.records = 1_000_000;
        settings.warmupMillis = 0;
        settings.repetitions = 1;
        settings.checkpointIntervalMs = 1_000;
        settings.output = output;
        settings.variants = List.of(variants);
        return settings;
    }

    @Test
    void everyRunOfItsOwnJvmHandsBackItsFigures() throws Exception {
        OverheadBenchmark.Variant dsd1 =
                OverheadBenchmark.Variant.clonos(
                        "DSD 1", Map.of("clonos.determinant-sharing-depth", "1"));
        ByteArrayOutputStream console = new ByteArrayOutputStream();

        String json =
                new OverheadBenchmark(
                                settings(OverheadBenchmark.Variant.FLINK, dsd1),
                                new PrintStream(console, true, StandardCharsets.UTF_8))
                        .run();

        assertThat(console.toString(StandardCharsets.UTF_8))
                .contains("Each run in a JVM of its own")
                .contains("[Flink] ")
                .contains("[DSD 1] ");
        assertThat(figure(json, "Flink", "records_per_s")).isPositive();
        assertThat(figure(json, "DSD 1", "records_per_s")).isPositive();
        assertThat(figure(json, "Flink", "determinant_bytes_per_record")).isZero();
        assertThat(figure(json, "DSD 1", "determinant_bytes_per_record"))
                .as("the determinants the Clonos run's tasks logged, counted in its own JVM")
                .isPositive();
    }

    @Test
    void aRunWhoseJvmFailsFailsTheBenchmarkWithItsOutput() {
        OverheadBenchmark.Variant bad =
                OverheadBenchmark.Variant.clonos(
                        "bad", Map.of("clonos.determinant-sharing-depth", "-7"));

        assertThatThrownBy(
                        () ->
                                new OverheadBenchmark(
                                                settings(bad),
                                                new PrintStream(
                                                        new ByteArrayOutputStream(),
                                                        true,
                                                        StandardCharsets.UTF_8))
                                        .run())
                .hasMessageContaining("The bad run's JVM exited with 1")
                .hasMessageContaining("clonos.determinant-sharing-depth");
    }

    /** The median run's {@code field} of {@code system} in the benchmark's JSON. */
    private static double figure(String json, String system, String field) {
        Matcher median =
                Pattern.compile(
                                "\"median\":\\{\"system\":\""
                                        + Pattern.quote(system)
                                        + "\"[^}]*?\""
                                        + field
                                        + "\":([0-9.]+)")
                        .matcher(json);
        assertThat(median.find()).as("%s's %s in %s", system, field, json).isTrue();
        return Double.parseDouble(median.group(1));
    }
}
