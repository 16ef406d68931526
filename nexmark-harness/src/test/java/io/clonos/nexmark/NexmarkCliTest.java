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

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code bin/clonos nexmark}: bad options fail before anything starts, naming what is wrong. */
class NexmarkCliTest {

    private final ByteArrayOutputStream errors = new ByteArrayOutputStream();
    private PrintStream stderr;

    @BeforeEach
    void captureErrors() {
        stderr = System.err;
        System.setErr(new PrintStream(errors, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restoreErrors() {
        System.setErr(stderr);
    }

    @Test
    void failureTakesQuery3Or8OrTheSyntheticJobOnly() throws Exception {
        assertThat(NexmarkCli.run(new String[] {"failure", "--query", "5"})).isEqualTo(2);
        assertThat(errors.toString(StandardCharsets.UTF_8))
                .contains("--query takes 3, 8, synthetic")
                .contains("not 5")
                .contains("Usage:");
    }

    @Test
    void failureNeedsAQuery() throws Exception {
        assertThat(NexmarkCli.run(new String[] {"failure", "--rate", "100"})).isEqualTo(2);
        assertThat(errors.toString(StandardCharsets.UTF_8))
                .contains("failure needs --query 3, 8 or synthetic");
    }

    @Test
    void failuresNeedASurvivingSliceAndTimeForTheLastLoss() throws Exception {
        assertThat(NexmarkCli.run(new String[] {"failure", "--query", "3", "--failures", "some"}))
                .isEqualTo(2);
        assertThat(
                        NexmarkCli.run(
                                new String[] {
                                    "failure", "--query", "3", "--failures", "concurrent"
                                }))
                .isEqualTo(2);
        assertThat(
                        NexmarkCli.run(
                                new String[] {
                                    "failure",
                                    "--query",
                                    "synthetic",
                                    "--failures",
                                    "staggered",
                                    "--parallelism",
                                    "4",
                                    "--seconds",
                                    "40",
                                    "--kill-after",
                                    "30"
                                }))
                .isEqualTo(2);
        assertThat(errors.toString(StandardCharsets.UTF_8))
                .contains("--failures takes one, concurrent or staggered, not 'some'")
                .contains("it needs --parallelism 4 or more, got 2")
                .contains("put the last loss at 40 s");
    }

    @Test
    void optionsOfOneJobAreRejectedForTheOthers() throws Exception {
        assertThat(NexmarkCli.run(new String[] {"failure", "--query", "3", "--state-mb", "200"}))
                .isEqualTo(2);
        assertThat(
                        NexmarkCli.run(
                                new String[] {
                                    "failure", "--query", "synthetic", "--window-seconds", "30"
                                }))
                .isEqualTo(2);
        assertThat(
                        NexmarkCli.run(
                                new String[] {
                                    "failure", "--query", "synthetic", "--state-mb", "0"
                                }))
                .isEqualTo(2);
        assertThat(errors.toString(StandardCharsets.UTF_8))
                .contains("--state-mb sizes the synthetic job's state")
                .contains("--window-seconds is Q8's window; the synthetic job has none")
                .contains("--state-mb takes a positive number, not 0");
    }

    @Test
    void theFailureMustComeBeforeTheEnd() throws Exception {
        assertThat(
                        NexmarkCli.run(
                                new String[] {
                                    "failure",
                                    "--query",
                                    "3",
                                    "--seconds",
                                    "10",
                                    "--kill-after",
                                    "10"
                                }))
                .isEqualTo(2);
        assertThat(errors.toString(StandardCharsets.UTF_8))
                .contains(
                        "--kill-after (10 s) and the spacing of --failures one put the last loss at"
                                + " 10 s, which must be before the end of --seconds (10)");
    }

    @Test
    void aCheckpointDirectoryFlinkCannotWriteToIsNamed() throws Exception {
        assertThat(
                        NexmarkCli.run(
                                new String[] {
                                    "failure",
                                    "--query",
                                    "3",
                                    "--checkpoint-dir",
                                    "nosuchfs://somewhere/checkpoints"
                                }))
                .isEqualTo(2);
        assertThat(errors.toString(StandardCharsets.UTF_8))
                .contains(
                        "--checkpoint-dir nosuchfs://somewhere/checkpoints is not a file system Flink can write checkpoints to");
    }

    @Test
    void badValuesAndUnknownOptionsAreNamed() throws Exception {
        assertThat(NexmarkCli.run(new String[] {"failure", "--query", "3", "--standby", "yes"}))
                .isEqualTo(2);
        assertThat(NexmarkCli.run(new String[] {"failure", "--query", "3", "--rate", "-5"}))
                .isEqualTo(2);
        assertThat(NexmarkCli.run(new String[] {"overhead", "--kill-after", "5"})).isEqualTo(2);
        assertThat(NexmarkCli.run(new String[] {"overhead", "--events", "100000"})).isEqualTo(2);
        assertThat(NexmarkCli.run(new String[] {"overhead", "--steady-seconds", "0"})).isEqualTo(2);
        assertThat(NexmarkCli.run(new String[] {"overhead", "--queries", "1,15"})).isEqualTo(2);
        assertThat(errors.toString(StandardCharsets.UTF_8))
                .contains("--standby takes true or false, not yes")
                .contains("--rate takes a positive number, not -5")
                .contains("Unknown option --kill-after for overhead")
                .contains("Unknown option --events for overhead")
                .contains("--steady-seconds takes a positive number, not 0")
                .contains("Q15 needs a bounded input");
    }

    @Test
    void theLoadIsAFractionOfTheCapacityAndExcludesAFixedRate() throws Exception {
        for (String load : new String[] {"0", "1.5", "-0.2", "most"}) {
            assertThat(NexmarkCli.run(new String[] {"failure", "--query", "3", "--load", load}))
                    .as("--load %s", load)
                    .isEqualTo(2);
            assertThat(errors.toString(StandardCharsets.UTF_8))
                    .contains("--load takes a fraction of the capacity in (0, 1], not " + load);
        }
        assertThat(
                        NexmarkCli.run(
                                new String[] {
                                    "failure", "--query", "3", "--load", "0.75", "--rate", "100"
                                }))
                .isEqualTo(2);
        assertThat(
                        NexmarkCli.run(
                                new String[] {
                                    "failure",
                                    "--query",
                                    "3",
                                    "--rate",
                                    "100",
                                    "--capacity-events",
                                    "10"
                                }))
                .isEqualTo(2);
        assertThat(NexmarkCli.run(new String[] {"failure", "--query", "3", "--repetitions", "0"}))
                .isEqualTo(2);
        assertThat(NexmarkCli.run(new String[] {"failure", "--query", "3", "--person-bytes", "0"}))
                .isEqualTo(2);
        assertThat(errors.toString(StandardCharsets.UTF_8))
                .contains("failure takes --rate or --load, not both")
                .contains(
                        "--capacity-events sizes the capacity run of --load; with --rate there is none")
                .contains("--repetitions takes a positive number, not 0")
                .contains("--person-bytes takes a positive number, not 0");
    }
}
