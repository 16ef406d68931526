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

import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.Determinant;
import io.clonos.runtime.causal.LocalRecoveryImpossibleException;
import io.clonos.runtime.causal.TaskCausalLog;

import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;
import org.apache.flink.streaming.runtime.tasks.TestProcessingTimeService;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.clonos.runtime.causal.ReplayFixtures.LOG;
import static io.clonos.runtime.causal.ReplayFixtures.replaying;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A recovering task's one-shot timers: noted while it replays, invoked at the logged firings, and
 * handed to Flink's timer service when the replay ends, each timer exactly once.
 */
class CausalTimersTest {

    private final TestProcessingTimeService flink = new TestProcessingTimeService();
    private final List<Long> fired = new ArrayList<>();

    /** A task whose predecessor's log, to replay, is one firing of a timer due at {@code due}. */
    private static CausalTask firingAtItsStart(long due) {
        return new CausalTask(
                new TaskCausalLog(LOG, 5),
                replaying(new Determinant.TimerFired(0, 0, due)),
                1,
                1,
                -1);
    }

    /** The recovering task's timer service of one operator; the task has started processing. */
    private ProcessingTimeService recovering(CausalTask task) {
        CausalTimers timers = new CausalTimers(task);
        task.processingStarted();
        return timers.wrap(flink);
    }

    @Test
    void aFiringThatIsTheReplaysLastDeterminantInvokesItsTimerOnceAndLeavesNothingToFlink()
            throws Exception {
        CausalTask task = firingAtItsStart(100);
        ProcessingTimeService service = recovering(task);
        service.registerTimer(100, fired::add);

        task.fireDueTimers();

        assertThat(task.recovery().isRunning()).as("the firing ended the replay").isTrue();
        assertThat(fired).containsExactly(100L);
        assertThat(flink.getNumActiveTimers())
                .as("the replayed timer is not handed to Flink to fire again")
                .isZero();
        flink.setCurrentTime(200);
        assertThat(fired).containsExactly(100L);
    }

    @Test
    void timersTheReplayDidNotFireGoToFlinkWhenItEnds() throws Exception {
        CausalTask task = firingAtItsStart(100);
        ProcessingTimeService service = recovering(task);
        service.registerTimer(100, fired::add);
        service.registerTimer(150, fired::add);

        task.fireDueTimers();
        assertThat(fired).containsExactly(100L);
        assertThat(flink.getNumActiveTimers()).isEqualTo(1);

        flink.setCurrentTime(150);
        assertThat(fired).containsExactly(100L, 150L);
    }

    @Test
    void aFiringWithoutItsTimerFailsTheLocalRecovery() {
        CausalTask task = firingAtItsStart(100);
        recovering(task).registerTimer(150, fired::add);

        assertThatThrownBy(task::fireDueTimers)
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("no timer for");
        assertThat(fired).isEmpty();
    }
}
