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

package io.clonos.bench.cli;

import io.clonos.cli.ClonosCli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code bin/clonos bench}'s command lines: the launcher's with the benchmarks added. */
class BenchCommandTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return ClonosCli.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                Map.of("bench", BenchCommand::run));
    }

    @Test
    void helpPrintsTheLaunchersUsage() {
        assertThat(run("bench", "overhead", "--help")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("bench overhead");
    }

    @Test
    void theLaunchersOwnCommandsStillRun() {
        assertThat(run("fail", "--vertex", "map")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("missing --job.");
    }

    @Test
    void aWarmUpRateWithoutAWarmUpToHoldIsAUsageError() {
        assertThat(run("bench", "overhead", "--warmup-rate", "1000", "--warmup-seconds", "2"))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("--warmup-rate needs a warm-up longer than 2 s")
                .contains("got --warmup-seconds 2");
    }

    @Test
    void benchRecoveryRejectsWhatItsModeDoesNotUse() {
        assertThat(run("bench", "recovery", "--processes", "remote")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("--processes must be embedded or separate, got 'remote'");
        err.reset();
        assertThat(run("bench", "recovery", "--repetitions", "3")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("--repetitions needs --processes separate");
        err.reset();
        assertThat(
                        run(
                                "bench",
                                "recovery",
                                "--processes",
                                "separate",
                                "--checkpoint-dir",
                                "file:///tmp/checkpoints"))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("--checkpoint-dir is not supported with --processes separate");
        err.reset();
        assertThat(run("bench", "recovery", "--processes", "separate", "--taskmanagers", "1"))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("--taskmanagers needs an integer of at least 2, got '1'");
        err.reset();
        assertThat(run("bench", "recovery", "--processes", "separate", "--load", "1.5"))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("--load needs a fraction of the capacity in (0, 1], got '1.5'");
        err.reset();
        assertThat(run("bench", "recovery", "--failures", "concurrent")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("--failures needs --processes separate");
        err.reset();
        assertThat(run("bench", "recovery", "--processes", "separate", "--failures", "many"))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("--failures takes one, concurrent or staggered, not 'many'");
        err.reset();
        assertThat(run("bench", "recovery", "--processes", "separate", "--failures", "staggered"))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("it needs --parallelism 4 or more, got 2");
    }
}
