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

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class RecoveryFiguresTest {

    /**
     * Two keys, one record per key every 10 ms over 20 s, 50 ms latency. Key 1 (affected) stops at
     * the failure (t = 10 s) and resumes 2 s later with 400 ms latency for 1 s, replaying 100 of
     * its records twice and never delivering seq 2001; key 0 runs on untouched.
     */
    @Test
    void figuresFollowTheirDefinitions() {
        long killedAt = 10_000;
        List<long[]> received = new ArrayList<>();
        for (long t = 0; t < 20_000; t += 10) {
            long seq0 = t / 10 * 2;
            received.add(new long[] {0, seq0, t, t + 50});
            long seq1 = seq0 + 1;
            if (seq1 == 2001) {
                continue;
            }
            if (t < killedAt) {
                received.add(new long[] {1, seq1, t, t + 50});
            } else if (t < killedAt + 2_000) {
                received.add(new long[] {1, seq1, t, killedAt + 2_000 + (t - killedAt) / 10});
            } else if (t < killedAt + 3_000) {
                received.add(new long[] {1, seq1, t, t + 400});
            } else {
                received.add(new long[] {1, seq1, t, t + 50});
            }
        }
        for (long seq = 1; seq < 200; seq += 2) {
            received.add(new long[] {1, seq, seq * 5, seq * 5 + 50});
        }

        RecoveryFigures figures =
                new RecoveryFigures(
                        "test", received, 4_000, seq -> true, killedAt, key -> key == 1);

        assertThat(figures.baselineLatencyMs).isEqualTo(50);
        assertThat(figures.lost).as("seq 2001 never arrived").isEqualTo(1);
        assertThat(figures.duplicated).isEqualTo(100);
        assertThat(figures.recoveredTaskEmitsAfterMs).isBetween(1_950L, 2_050L);
        assertThat(figures.unaffectedRecoveryMs).isZero();
        assertThat(figures.unaffectedMaxStallMs).isLessThanOrEqualTo(10);
        assertThat(figures.recoveryMs)
                .as("key 1's latency is high until 3.5 s after the failure")
                .isBetween(3_000L, 4_000L);
        assertThat(figures.robustRecoveryMs)
                .as(
                        "under the p99 before the failure (50 ms) for 3 s from 13.5 s on; key 0"
                                + " alone in bounds while key 1 is silent does not count")
                .isEqualTo(3_500);
        assertThat(figures.maxOutputGapMs).as("key 0 never stops").isLessThanOrEqualTo(10);
    }

    /**
     * Key 1 is silent for 4 s after the failure, then late for 1 s: the robust recovery counts from
     * its return, not from the 4 s in which key 0 alone was in bounds.
     */
    @Test
    void theRobustRecoveryStartsWhenTheLostKeysAreBack() {
        long killedAt = 10_000;
        List<long[]> received = new ArrayList<>();
        for (long t = 0; t < 20_000; t += 10) {
            long seq0 = t / 10 * 2;
            received.add(new long[] {0, seq0, t, t + 50});
            if (t < killedAt || t >= killedAt + 5_000) {
                received.add(new long[] {1, seq0 + 1, t, t + 50});
            } else if (t >= killedAt + 4_000) {
                received.add(new long[] {1, seq0 + 1, t, t + 400});
            }
        }

        RecoveryFigures figures =
                new RecoveryFigures(
                        "test", received, 4_000, seq -> true, killedAt, key -> key == 1);

        assertThat(figures.recoveredTaskEmitsAfterMs).isBetween(4_350L, 4_450L);
        assertThat(figures.robustRecoveryMs)
                .as("in bounds for 3 s from 15.5 s on (the late records arrive until 15.4 s)")
                .isEqualTo(5_500);
    }
}
