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

package io.clonos.runtime.causal;

import org.junit.jupiter.api.Test;

import static io.clonos.runtime.causal.ReplayFixtures.LOG;
import static io.clonos.runtime.causal.ReplayFixtures.logged;
import static io.clonos.runtime.causal.ReplayFixtures.replaying;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The task's clock: it ticks at logged points; readings in between are no determinants. */
class CausalTaskClockTest {

    @Test
    void theFirstReadingOfAnElementTicksAndTheOthersReturnTheTick() {
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(LOG, 1),
                        CausalRecovery.notRecovering("task", LOG),
                        2,
                        1,
                        -1);
        task.processingStarted();
        task.epochStarted(2);

        assertThat(task.timestamp(() -> 100)).isEqualTo(100);
        assertThat(task.timestamp(() -> 105)).as("the same element").isEqualTo(100);
        task.beforeElement();
        assertThat(task.timestamp(() -> 110)).isEqualTo(110);
        assertThat(task.timestamp(() -> 115)).isEqualTo(110);
        task.timerFiring(0, 120);
        assertThat(task.timestamp(() -> 130)).as("a timer's callback ticks anew").isEqualTo(130);
        task.beforeElement();
        assertThat(task.timestamp(() -> 90)).as("the clock does not go back").isEqualTo(130);

        assertThat(logged(task, 2))
                .containsExactly(
                        new Determinant.Timestamp(0, 100),
                        new Determinant.Timestamp(1, 110),
                        new Determinant.TimerFired(1, 0, 120),
                        new Determinant.Timestamp(1, 130),
                        new Determinant.Timestamp(2, 130));
    }

    @Test
    void aRecoveredTaskSeesItsPredecessorsTicksHoweverOftenItReads() {
        CausalRecovery recovery =
                replaying(new Determinant.Timestamp(0, 100), new Determinant.Timestamp(2, 250));
        CausalTask task = new CausalTask(new TaskCausalLog(LOG, 5), recovery, 2, 1, -1);
        task.processingStarted();

        // the predecessor read the time once before its first element; this task reads it twice
        assertThat(task.timestamp(() -> 999)).isEqualTo(100);
        assertThat(task.timestamp(() -> 999)).isEqualTo(100);
        task.beforeElement();
        task.beforeElement();
        assertThat(task.timestamp(() -> 999)).as("the tick of the second element").isEqualTo(250);
        assertThat(task.timestamp(() -> 999)).isEqualTo(250);
        assertThat(recovery.isRunning()).isTrue();
    }

    @Test
    void aReadingAtAnotherElementThanThePredecessorsIsADivergence() {
        CausalRecovery recovery = replaying(new Determinant.Timestamp(1, 100));
        CausalTask task = new CausalTask(new TaskCausalLog(LOG, 5), recovery, 2, 1, -1);
        task.processingStarted();

        assertThatThrownBy(() -> task.timestamp(() -> 999))
                .isInstanceOf(io.clonos.runtime.causal.LocalRecoveryImpossibleException.class)
                .hasMessageContaining("element 0")
                .hasMessageContaining("element 1");
    }
}
