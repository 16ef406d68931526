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

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Recovery time and timelines from output records whose latencies are known. */
class FailureFiguresTest {

    private static final long KILL = 100_000;

    /**
     * One result for input due every 10 ms from {@code from} to {@code to}, {@code latency} late.
     */
    private static void results(
            List<FailureFigures.Output> outputs, long from, long to, long latency) {
        for (long t = from; t < to; t += 10) {
            outputs.add(new FailureFigures.Output(t + latency, t, 0, "r" + t));
        }
    }

    @Test
    void recoveredWhenLatencyIsBackInBoundsAndStaysThere() {
        List<FailureFigures.Output> outputs = new ArrayList<>();
        results(outputs, KILL - 20_000, KILL, 50);
        // the input due in the first 2 s after the failure comes out from KILL + 2 s, a backlog
        // drained four times as fast as it came
        for (long due = KILL; due < KILL + 2_000; due += 10) {
            long out = KILL + 2_000 + (due - KILL) / 4;
            outputs.add(new FailureFigures.Output(out, due, 0, "backlog" + due));
        }
        results(outputs, KILL + 2_000, KILL + 2_400, 300);
        results(outputs, KILL + 2_400, KILL + 10_000, 50);
        // one late straggler far above the bound, alone in its bucket
        outputs.add(new FailureFigures.Output(KILL + 8_100 + 900, KILL + 8_100, 0, "straggler"));

        FailureFigures figures = new FailureFigures("test", outputs, KILL, 20_000);

        assertThat(figures.baselineLatencyMs).isEqualTo(50);
        assertThat(figures.latencyBoundMs).isEqualTo(55);
        // the last bucket out of bounds before three in a row back in bounds holds KILL + 2.4 s
        assertThat(figures.recoveryMs).isBetween(2_400L, 2_400L + FailureFigures.BUCKET_MS);
        assertThat(figures.longestGapMs).isBetween(1_900L, 2_000L);
        assertThat(figures.results).isEqualTo(outputs.size());
    }

    /**
     * The lost subtask's results stop while the others' keep their latency: by when results came
     * out, the first second after the failure would look recovered before the backlog arrived.
     */
    @Test
    void theLostSubtasksBacklogCountsWhereItsInputWasDue() {
        List<FailureFigures.Output> outputs = new ArrayList<>();
        results(outputs, KILL - 20_000, KILL + 10_000, 50);
        // the lost half of the keys: its input due in the 3 s after the failure comes out at 3 s
        for (long due = KILL + 5; due < KILL + 3_000; due += 10) {
            outputs.add(new FailureFigures.Output(KILL + 3_000, due, 0, "lost" + due));
        }

        FailureFigures figures = new FailureFigures("test", outputs, KILL, 20_000);

        assertThat(figures.recoveryMs)
                .as("until the input due late in the outage came out in bounds")
                .isBetween(2_900L, 3_000L + FailureFigures.BUCKET_MS);
    }

    @Test
    void noRecoveryTimeWhenLatencyNeverLeavesItsBounds() {
        List<FailureFigures.Output> outputs = new ArrayList<>();
        results(outputs, KILL - 20_000, KILL + 10_000, 50);

        FailureFigures figures = new FailureFigures("test", outputs, KILL, 20_000);

        assertThat(figures.recoveryMs).isZero();
        assertThat(figures.timeline)
                .allMatch(line -> line.startsWith("test,"))
                .anyMatch(line -> line.startsWith("test,0,"));
    }

    @Test
    void bucketsWithoutOutputDoNotCount() {
        // a window's results every 10 s, as Q8's: empty buckets between them are no failure
        List<FailureFigures.Output> outputs = new ArrayList<>();
        for (long window = KILL - 20_000; window < KILL + 40_000; window += 10_000) {
            long latency = window == KILL + 10_000 ? 3_000 : 200;
            results(outputs, window, window + 50, latency);
        }

        FailureFigures figures = new FailureFigures("test", outputs, KILL, 20_000);

        assertThat(figures.baselineLatencyMs).isEqualTo(200);
        assertThat(figures.recoveryMs)
                .as("until the end of the bucket of the late window")
                .isBetween(10_000L, 10_000L + FailureFigures.BUCKET_MS);
    }

    @Test
    void theRobustRecoveryWaitsForThreeSecondsUnderThePercentile() {
        List<FailureFigures.Output> outputs = new ArrayList<>();
        results(outputs, KILL - 20_000, KILL, 50);
        results(outputs, KILL, KILL + 3_000, 800);
        // back for a second and a half, then once more far out, then back for good
        results(outputs, KILL + 3_000, KILL + 4_500, 50);
        results(outputs, KILL + 4_500, KILL + 4_800, 800);
        results(outputs, KILL + 4_800, KILL + 12_000, 50);

        FailureFigures figures = new FailureFigures("test", outputs, KILL, 20_000);

        assertThat(figures.recoveryMs)
                .as("a second back in bounds is enough")
                .isBetween(3_000L - FailureFigures.BUCKET_MS, 3_000L + FailureFigures.BUCKET_MS);
        assertThat(figures.robustRecoveryMs)
                .as("the relapse at 4.5 s counts: three seconds back in bounds are needed")
                .isBetween(4_800L - FailureFigures.BUCKET_MS, 4_800L + FailureFigures.BUCKET_MS);
    }

    /**
     * A restart re-emits what its last checkpoint had not committed: results for input due before
     * the failure come out late after it. They are the failure's doing, not the level before it.
     */
    @Test
    void resultsReEmittedAfterTheFailureCountInItsFirstBucket() {
        List<FailureFigures.Output> outputs = new ArrayList<>();
        results(outputs, KILL - 20_000, KILL - 3_000, 50);
        // the last 3 s before the failure, never committed, and the 4.5 s after it come out at once
        for (long due = KILL - 3_000; due < KILL + 4_500; due += 10) {
            outputs.add(new FailureFigures.Output(KILL + 4_500, due, 0, "restart" + due));
        }
        results(outputs, KILL + 4_500, KILL + 15_000, 50);

        FailureFigures figures = new FailureFigures("test", outputs, KILL, 20_000);

        assertThat(figures.latencyBoundMs).as("the level before the failure").isEqualTo(55);
        assertThat(figures.recoveryMs)
                .as("until the input due after the outage came out in bounds")
                .isBetween(4_000L, 4_500L + FailureFigures.BUCKET_MS);
    }
}
