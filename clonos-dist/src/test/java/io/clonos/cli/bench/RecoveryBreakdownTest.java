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

package io.clonos.cli.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class RecoveryBreakdownTest {

    private static final long KILLED_AT = 10_000;

    /** Key 1 is silent from the failure for 2 s, then back at its latency before. */
    private static RecoveryFigures figures() {
        List<long[]> received = new ArrayList<>();
        for (long t = 0; t < 20_000; t += 10) {
            received.add(new long[] {0, t / 10 * 2, t, t + 50});
            if (t < KILLED_AT || t >= KILLED_AT + 2_000) {
                received.add(new long[] {1, t / 10 * 2 + 1, t, t + 50});
            }
        }
        return new RecoveryFigures("test", received, 4_000, seq -> true, KILLED_AT, k -> k == 1);
    }

    @Test
    void phasesRunFromTheKillToTheRobustRecovery() {
        RecoveryFigures figures = figures();
        RecoveryBreakdown breakdown =
                RecoveryBreakdown.of(
                        Map.of(
                                "CREATED", KILLED_AT + 1_200,
                                "SCHEDULED", KILLED_AT + 1_210,
                                "DEPLOYING", KILLED_AT + 1_300,
                                "INITIALIZING", KILLED_AT + 1_450,
                                "RUNNING", KILLED_AT + 1_700,
                                "FINISHED", KILLED_AT + 9_000),
                        KILLED_AT,
                        KILLED_AT + 180,
                        figures);

        assertThat(breakdown.ms("detection")).isEqualTo(180);
        assertThat(breakdown.ms("restart")).isEqualTo(1_020);
        assertThat(breakdown.ms("scheduling")).isEqualTo(100);
        assertThat(breakdown.ms("deployment")).isEqualTo(150);
        assertThat(breakdown.ms("restore")).isEqualTo(250);
        assertThat(breakdown.ms("replay"))
                .as("running to the lost keys' first output, about 2 s after the kill")
                .isBetween(250L, 350L);
        long sum = 0;
        for (String phase : RecoveryBreakdown.PHASES) {
            sum += phase.equals("catch_up") ? 0 : breakdown.ms(phase);
        }
        assertThat(sum)
                .as("the phases up to the lost keys' first output add up to it")
                .isEqualTo(figures.recoveredTaskEmitsAfterMs);
        assertThat(breakdown.ms("catch_up"))
                .as("back in bounds at once (the robust recovery rounds down to its bucket)")
                .isZero();
        assertThat(breakdown.json()).startsWith("{\"detection_ms\":180,\"restart_ms\":1020,");
    }

    @Test
    void eachBoundaryIsWhenTheLastReplacementGotThere() {
        RecoveryBreakdown breakdown =
                RecoveryBreakdown.of(
                        List.of(
                                Map.of(
                                        "CREATED", KILLED_AT + 1_200,
                                        "DEPLOYING", KILLED_AT + 1_300,
                                        "INITIALIZING", KILLED_AT + 1_900,
                                        "RUNNING", KILLED_AT + 1_950),
                                Map.of(
                                        "CREATED", KILLED_AT + 1_210,
                                        "DEPLOYING", KILLED_AT + 1_500,
                                        "INITIALIZING", KILLED_AT + 1_600,
                                        "RUNNING", KILLED_AT + 1_700)),
                        KILLED_AT,
                        KILLED_AT + 200,
                        figures());

        assertThat(breakdown.ms("restart")).isEqualTo(1_010);
        assertThat(breakdown.ms("scheduling")).isEqualTo(290);
        assertThat(breakdown.ms("deployment")).isEqualTo(400);
        assertThat(breakdown.ms("restore")).isEqualTo(50);
    }

    @Test
    void aPhaseWithoutItsBoundaryIsUnknownNotZero() {
        RecoveryBreakdown breakdown =
                RecoveryBreakdown.of(
                        Map.of("CREATED", KILLED_AT + 1_200, "RUNNING", KILLED_AT + 1_700),
                        KILLED_AT,
                        -1,
                        figures());

        assertThat(breakdown.ms("detection")).isEqualTo(-1);
        assertThat(breakdown.ms("restart")).isEqualTo(-1);
        assertThat(breakdown.ms("scheduling")).as("no DEPLOYING").isEqualTo(-1);
        assertThat(breakdown.ms("restore")).as("no INITIALIZING").isEqualTo(-1);
        assertThat(breakdown.ms("replay")).isPositive();
    }
}
