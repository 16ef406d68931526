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

import java.util.Random;

import static io.clonos.runtime.causal.ReplayFixtures.LOG;
import static io.clonos.runtime.causal.ReplayFixtures.bytes;
import static io.clonos.runtime.causal.ReplayFixtures.logged;
import static io.clonos.runtime.causal.ReplayFixtures.replaying;
import static io.clonos.runtime.causal.ReplayFixtures.running;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The task's clock: it ticks at logged points; readings in between are no determinants. */
class CausalTaskClockTest {

    @Test
    void theFirstReadingOfAnElementTicksAndTheOthersReturnTheTick() {
        CausalTask task = running(new TaskCausalLog(LOG, 1), 2);
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

    /**
     * A busy task's ticks are logged as runs, cut wherever its consumers happened to read the log.
     * The recovered task, read at other points, logs the same bytes: its consumers hold copies of
     * the predecessor's log and take the recovered task's only where they agree.
     */
    @Test
    void aRecoveredTaskLogsItsPredecessorsRunsByteForByte() throws Exception {
        Random random = new Random(7);
        TaskCausalLog predecessorLog = new TaskCausalLog(LOG, 5);
        CausalTask predecessor = running(predecessorLog, 2);
        TaskCausalLog.Position consumer = new TaskCausalLog.Position();
        for (int element = 1; element <= 3_000; element++) {
            predecessor.beforeElement();
            long now = 1_000 + element / 400;
            predecessor.timestamp(() -> now);
            if (random.nextInt(50) == 0) {
                predecessorLog.deltasSince(consumer);
            }
        }
        byte[] logged = bytes(predecessorLog);
        assertThat(logged.length).as("a tick costs far less than a byte").isLessThan(300);

        CausalRecovery recovery = ReplayFixtures.replaying(predecessorLog);
        TaskCausalLog recoveredLog = new TaskCausalLog(LOG, 5);
        CausalTask recovered = new CausalTask(recoveredLog, recovery, 2, 1, -1);
        recovered.processingStarted();
        TaskCausalLog.Position recoveredConsumer = new TaskCausalLog.Position();
        for (int element = 1; element <= 3_000; element++) {
            recovered.beforeElement();
            assertThat(recovered.timestamp(() -> 999_999)).isEqualTo(1_000 + element / 400);
            if (random.nextInt(7) == 0) {
                recoveredLog.deltasSince(recoveredConsumer);
            }
        }
        assertThat(recovery.isRunning()).isTrue();
        assertThat(bytes(recoveredLog)).isEqualTo(logged);

        // running normally, it goes on where its predecessor's log ended
        recovered.beforeElement();
        assertThat(recovered.timestamp(() -> 1_007)).isEqualTo(1_007);
        assertThat(bytes(recoveredLog)).startsWith(logged).hasSizeGreaterThan(logged.length);
    }

    @Test
    void aRecoveredTaskThatSkipsAReadingWithinARunDiverges() {
        CausalRecovery recovery =
                replaying(new Determinant.Timestamp(1, 100), new Determinant.Timestamp(2, 100, 5));
        CausalTask task = new CausalTask(new TaskCausalLog(LOG, 5), recovery, 2, 1, -1);
        task.processingStarted();
        task.beforeElement();
        task.timestamp(() -> 999);
        task.beforeElement();
        task.timestamp(() -> 999);
        task.beforeElement();
        task.beforeElement();

        assertThatThrownBy(() -> task.timestamp(() -> 999))
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("element 4")
                .hasMessageContaining("element 3");
    }

    @Test
    void aCheckpointBeforeTheRunIsUsedUpIsADivergence() {
        CausalRecovery recovery =
                replaying(new Determinant.Timestamp(1, 100), new Determinant.Timestamp(2, 100, 3));
        CausalTask task = new CausalTask(new TaskCausalLog(LOG, 5), recovery, 2, 1, -1);
        task.processingStarted();
        for (int element = 1; element <= 3; element++) {
            task.beforeElement();
            task.timestamp(() -> 999);
        }

        assertThatThrownBy(() -> task.epochStarted(6))
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("1 determinants of epoch 5 unused");
    }
}
