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

class WindowFiringsTest {

    /** {@code count} results of the window ending at {@code due}, one every {@code step} ms. */
    private static void firing(
            List<FailureFigures.Output> outputs,
            long due,
            int partition,
            int count,
            long firstLatency,
            long step) {
        for (int i = 0; i < count; i++) {
            outputs.add(
                    new FailureFigures.Output(
                            due + firstLatency + i * step, due, partition, "r" + i));
        }
    }

    @Test
    void aWindowsResultsPerPartitionGiveItsFirstResultAndItsFiringsPace() {
        List<FailureFigures.Output> outputs = new ArrayList<>();
        firing(outputs, -5_000, 1, 200, 400, 10);
        firing(outputs, -5_000, 0, 101, 300, 20);
        firing(outputs, 10_000, 0, 150, 6_000, 2);

        assertThat(WindowFirings.of(outputs))
                .containsExactly(
                        new WindowFirings.Firing(-5_000, 0, 101, 300, 300 + 50 * 20, 300 + 2_000),
                        new WindowFirings.Firing(-5_000, 1, 200, 400, 400 + 99 * 10, 400 + 1_990),
                        new WindowFirings.Firing(10_000, 0, 150, 6_000, 6_000 + 74 * 2, 6_298));
        assertThat(WindowFirings.of(outputs).get(0).perSecond()).isEqualTo(101 * 1000 / 2_000);
    }

    @Test
    void resultsThatEachAnswerTheirOwnEventAreNoWindow() {
        List<FailureFigures.Output> outputs = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            outputs.add(new FailureFigures.Output(i + 300, i, i % 2, "q3-" + i));
        }
        firing(outputs, 50_000, 0, WindowFirings.MIN_RESULTS - 1, 100, 1);

        assertThat(WindowFirings.of(outputs)).isEmpty();
    }

    @Test
    void aFiringAtOneInstantCountsItsResultsAsItsPace() {
        List<FailureFigures.Output> outputs = new ArrayList<>();
        firing(outputs, 0, 0, 120, 700, 0);

        assertThat(WindowFirings.of(outputs).get(0).perSecond()).isEqualTo(120);
    }
}
