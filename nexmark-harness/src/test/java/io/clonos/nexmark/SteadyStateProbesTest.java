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

import io.clonos.bench.probe.ProbeRecords;

import org.joda.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/** How the Nexmark overhead run's probes write their rows and how it reads a steady state. */
class SteadyStateProbesTest {

    @TempDir Path probes;

    @Test
    void aResultsLatencyRunsFromTheEntryOfTheFirstEventAtOrAfterItsTimestamp() {
        SteadyStateProbes.Steady steady =
                SteadyStateProbes.Steady.of(
                        List.of(
                                new long[] {100, 1_000, 1, 0},
                                new long[] {200, 1_050, 1, 0},
                                new long[] {200, 1_040, 1, 0},
                                new long[] {300, 1_100, 1, 0}),
                        List.of(new long[] {150, 1_070, 1, 0}, new long[] {100, 1_010, 3, 0}),
                        0,
                        1_000);
        assertThat(steady.from()).isEqualTo(1_000);
        assertThat(steady.to()).as("the last event's entry ends the window").isEqualTo(1_100);
        assertThat(steady.results()).isEqualTo(4);
        // 150: the first event at or after it is 200, first entered at 1040: 30 ms; 100: 10 ms
        assertThat(steady.latencies().count()).isEqualTo(4);
        assertThat(steady.latencies().quantile(0.25)).isEqualTo(10);
        assertThat(steady.latencies().quantile(1.0)).isEqualTo(30);
    }

    @Test
    void anEventThatEnteredOnlyAfterTheResultLeftDoesNotCount() {
        SteadyStateProbes.Steady steady =
                SteadyStateProbes.Steady.of(
                        List.of(new long[] {100, 1_000, 1, 0}, new long[] {500, 2_000, 1, 0}),
                        List.of(new long[] {400, 1_500, 1, 0}, new long[] {1_000, 1_900, 1, 0}),
                        0,
                        10_000);
        assertThat(steady.results()).isEqualTo(2);
        assertThat(steady.latencies().count())
                .as("the event at 500 entered after the first result left; none after 1000")
                .isZero();
    }

    @Test
    void onlyTheSteadyStateAfterTheWarmUpCounts() {
        // an event time per 10 ms of wall time from 0 to 10 s, 7 events each
        List<long[]> entered = new java.util.ArrayList<>();
        List<long[]> left = new java.util.ArrayList<>();
        for (long wall = 0; wall <= 10_000; wall += 10) {
            entered.add(new long[] {wall / 10, wall, 7, 0});
            // each event time's results leave 5 ms after its first event entered, twice
            left.add(new long[] {wall / 10, wall + 5, 2, 0});
        }
        SteadyStateProbes.Steady steady = SteadyStateProbes.Steady.of(entered, left, 2_000, 5_000);

        assertThat(steady.from()).isEqualTo(2_000);
        assertThat(steady.to()).isEqualTo(7_000);
        assertThat(steady.millis()).isEqualTo(5_000);
        assertThat(steady.events()).as("500 rows of 7 events").isEqualTo(3_500);
        assertThat(steady.allEvents()).isEqualTo(1_001 * 7);
        assertThat(steady.results()).isEqualTo(1_000);
        assertThat(steady.latencies().quantile(0.5)).isEqualTo(5);
        assertThat(steady.latencies().quantile(0.99)).isEqualTo(5);
    }

    @Test
    void theEntryProbesRowsCountEveryEventInItsBucketOfEventTimeAndReachTheFileWithTheBundle()
            throws Exception {
        SteadyStateProbes.FirstEvent probe = new SteadyStateProbes.FirstEvent(probes.toString());
        probe.setup();
        // buckets of 10 ms: 20-29, 30-39, 20-29
        for (long time : new long[] {21, 22, 29, 30, 39, 25}) {
            probe.note(new Instant(time));
        }
        probe.finishBundle();
        // the bundle's rows are in the file while the probe is still open
        assertThat(ProbeRecords.read(probes, SteadyStateProbes.ENTERED, 4))
                .extracting(row -> row[2])
                .containsOnly(1L, 2L, 3L)
                .contains(2L)
                .as("every event noted")
                .matches(counts -> counts.stream().mapToLong(Long::longValue).sum() == 6);
        probe.note(new Instant(26));
        probe.teardown();

        List<long[]> rows = ProbeRecords.read(probes, SteadyStateProbes.ENTERED, 4);
        // a row starts at its first event and holds no event of another bucket
        assertThat(rows).extracting(row -> row[0]).startsWith(21L).contains(30L, 25L, 26L);
        java.util.Map<Long, Long> byBucket = new java.util.TreeMap<>();
        for (long[] row : rows) {
            byBucket.merge(row[0] / SteadyStateProbes.EVENT_TIME_BUCKET_MS, row[2], Long::sum);
        }
        assertThat(byBucket).containsExactly(entry(2L, 5L), entry(3L, 2L));
        assertThat(SteadyStateProbes.anyEntered(probes)).isTrue();
    }

    @Test
    void aResultCountsFromTheLastSourceSubtaskThatHadPassedItsEventTime() {
        // probe 1 runs 400 ms of event time ahead of probe 2
        List<long[]> entered =
                List.of(
                        new long[] {1_000, 1_000, 1, 1},
                        new long[] {1_400, 1_100, 1, 1},
                        new long[] {1_000, 1_300, 1, 2},
                        new long[] {1_400, 1_700, 1, 2});
        SteadyStateProbes.Steady steady =
                SteadyStateProbes.Steady.of(
                        entered,
                        List.of(
                                // a window ending at 1,000 closes once both passed it
                                new long[] {1_000, 1_350, 1, 0},
                                // an event of probe 1 at 1,400, out before probe 2 passed 1,400
                                new long[] {1_400, 1_120, 1, 0}),
                        0,
                        10_000);
        assertThat(steady.latencies().count()).isEqualTo(2);
        assertThat(steady.latencies().quantile(0.5))
                .as("1,400 left 20 ms after probe 1 passed it; probe 2 had not yet")
                .isEqualTo(20);
        assertThat(steady.latencies().quantile(1.0))
                .as("1,000 left 50 ms after probe 2, the later one, passed it")
                .isEqualTo(50);
    }

    @Test
    void noRowsNoEntry() throws Exception {
        assertThat(SteadyStateProbes.anyEntered(probes)).isFalse();
        SteadyStateProbes.Steady steady =
                SteadyStateProbes.Steady.of(List.of(), List.of(), 1_000, 1_000);
        assertThat(steady.events()).isZero();
        assertThat(steady.latencies().count()).isZero();
    }
}
