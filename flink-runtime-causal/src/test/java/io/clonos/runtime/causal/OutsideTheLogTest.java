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

import java.util.ArrayList;
import java.util.List;

import static io.clonos.runtime.causal.ReplayFixtures.LOG;
import static io.clonos.runtime.causal.ReplayFixtures.logged;
import static io.clonos.runtime.causal.ReplayFixtures.replaying;
import static io.clonos.runtime.causal.ReplayFixtures.running;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Code the task runs outside its log (an async operator's call of its user function, which a replay
 * does not make again): its choices are fresh and unlogged, and they leave the logged ones as they
 * would have been without it.
 */
class OutsideTheLogTest {

    @Test
    void choicesOutsideTheLogAreFreshAndUnlogged() {
        CausalTask task = running(new TaskCausalLog(LOG, 5), 1);
        task.beforeElement();
        long[] inside = new long[1];
        task.outsideTheLog(
                () -> {
                    assertThat(task.isProcessing()).isFalse();
                    inside[0] = task.timestamp(() -> 500);
                });
        assertThat(task.isProcessing()).isTrue();
        assertThat(inside[0]).isEqualTo(500);
        assertThat(task.timestamp(() -> 600)).as("the element's own tick").isEqualTo(600);
        assertThat(logged(task, 5)).containsExactly(new Determinant.Timestamp(1, 600));
    }

    /**
     * The task thread's random numbers are the same in a replay whatever the predecessor drew
     * outside the log: such draws do not move the logged sequence, which would otherwise differ in
     * the replay without any determinant to notice it.
     */
    @Test
    void drawsOutsideTheLogLeaveTheReplayedNumbersAlone() {
        CausalTask predecessor = running(new TaskCausalLog(LOG, 5), 1);
        EpochRandom random = new EpochRandom(predecessor);
        List<Long> drawn = new ArrayList<>();
        for (int element = 0; element < 20; element++) {
            predecessor.beforeElement();
            if (element % 3 == 0) {
                predecessor.outsideTheLog(random::nextLong);
            }
            drawn.add(random.nextLong());
        }

        CausalTask recovered =
                new CausalTask(
                        new TaskCausalLog(LOG, 5),
                        replaying(logged(predecessor, 5).toArray(new Determinant[0])),
                        1,
                        1,
                        -1);
        recovered.processingStarted();
        EpochRandom replayed = new EpochRandom(recovered);
        List<Long> redrawn = new ArrayList<>();
        for (int element = 0; element < 20; element++) {
            recovered.beforeElement();
            redrawn.add(replayed.nextLong());
        }
        assertThat(redrawn).isEqualTo(drawn);
    }
}
