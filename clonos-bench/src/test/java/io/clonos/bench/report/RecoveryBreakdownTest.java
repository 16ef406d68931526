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

package io.clonos.bench.report;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class RecoveryBreakdownTest {

    private static final long KILLED_AT = 10_000;

    /** The lost keys' first result 2 s after the kill, back in bounds with it. */
    private static final long FIRST_OUTPUT_AT = KILLED_AT + 2_000;

    private static final long RECOVERED_AT = KILLED_AT + 2_000;

    @Test
    void phasesRunFromTheKillToTheRobustRecovery() {
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
                        FIRST_OUTPUT_AT,
                        RECOVERED_AT);

        assertThat(breakdown.ms("detection")).isEqualTo(180);
        assertThat(breakdown.ms("restart")).isEqualTo(1_020);
        assertThat(breakdown.ms("scheduling")).isEqualTo(100);
        assertThat(breakdown.ms("deployment")).isEqualTo(150);
        assertThat(breakdown.ms("restore")).isEqualTo(250);
        assertThat(breakdown.ms("replay"))
                .as("running to the lost keys' first output")
                .isEqualTo(300);
        long sum = 0;
        for (String phase : RecoveryBreakdown.PHASES) {
            sum += phase.equals("catch_up") ? 0 : breakdown.ms(phase);
        }
        assertThat(sum)
                .as("the phases up to the lost keys' first output add up to it")
                .isEqualTo(FIRST_OUTPUT_AT - KILLED_AT);
        assertThat(breakdown.ms("catch_up")).as("back in bounds with the first output").isZero();
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
                        FIRST_OUTPUT_AT,
                        RECOVERED_AT);

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
                        FIRST_OUTPUT_AT,
                        -1);

        assertThat(breakdown.ms("detection")).isEqualTo(-1);
        assertThat(breakdown.ms("restart")).isEqualTo(-1);
        assertThat(breakdown.ms("scheduling")).as("no DEPLOYING").isEqualTo(-1);
        assertThat(breakdown.ms("restore")).as("no INITIALIZING").isEqualTo(-1);
        assertThat(breakdown.ms("replay")).isPositive();
        assertThat(breakdown.ms("catch_up")).as("no recovery end").isEqualTo(-1);
    }
}
