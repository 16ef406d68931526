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

package io.clonos.streaming.causal;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The timer benchmark registers each key's timer once per window and fires them every window. */
class TimerRegistrationBenchmarkTest {

    @ParameterizedTest
    @ValueSource(strings = {"flink", "canonical"})
    void eachWindowHoldsOneTimerPerKeyUntilItFires(String queue) {
        TimerRegistrationBenchmark benchmark = new TimerRegistrationBenchmark();
        benchmark.queue = queue;
        benchmark.setUp();
        for (int window = 0; window < 3; window++) {
            for (int i = 0; i < TimerRegistrationBenchmark.WINDOW_ELEMENTS - 1; i++) {
                benchmark.element();
            }
            assertThat(benchmark.timers.size()).isEqualTo(TimerRegistrationBenchmark.KEYS);
            benchmark.element();
            assertThat(benchmark.timers.size()).as("the window's timers fired").isZero();
        }
    }
}
