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

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** How the Nexmark overhead run turns its probes' rows into a duration and latencies. */
class NexmarkProbeTest {

    @Test
    void aResultsLatencyRunsFromTheEntryOfTheFirstEventAtOrAfterItsTimestamp() {
        NexmarkOverhead.Probe probe =
                NexmarkOverhead.Probe.of(
                        List.of(
                                new long[] {100, 1_000},
                                new long[] {200, 1_050},
                                new long[] {200, 1_040},
                                new long[] {300, 1_100}),
                        List.of(new long[] {150, 1_070}, new long[] {100, 1_010}));
        assertThat(probe.firstIn).isEqualTo(1_000);
        assertThat(probe.lastOut).isEqualTo(1_070);
        assertThat(probe.results).isEqualTo(2);
        // 150: the first event at or after it is 200, first entered at 1040
        assertThat(probe.latencies).containsExactly(30L, 10L);
    }

    @Test
    void anEventThatEnteredOnlyAfterTheResultLeftDoesNotCount() {
        NexmarkOverhead.Probe probe =
                NexmarkOverhead.Probe.of(
                        List.of(new long[] {100, 1_000}, new long[] {500, 2_000}),
                        List.of(new long[] {400, 1_500}, new long[] {1_000, 3_000}));
        assertThat(probe.results).isEqualTo(2);
        assertThat(probe.latencies)
                .as("the event at 500 entered after the first result left; none after 1000")
                .isEmpty();
    }
}
