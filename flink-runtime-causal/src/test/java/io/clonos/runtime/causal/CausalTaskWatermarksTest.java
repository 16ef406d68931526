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
import java.util.concurrent.atomic.AtomicBoolean;

import static io.clonos.runtime.causal.ReplayFixtures.LOG;
import static io.clonos.runtime.causal.ReplayFixtures.logged;
import static io.clonos.runtime.causal.ReplayFixtures.replaying;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Watermarks as determinants: a running task logs what its inputs hand on; a recovering one hands
 * on the logged watermarks at their offsets and nothing of its own, and makes no choice of its own
 * while its output still regenerates what consumers received.
 */
class CausalTaskWatermarksTest {

    /**
     * What a task's inputs handed on: "input:watermark" or "input:idle"/"input:active", and
     * combinations.
     */
    private static final class Handed implements InputWatermarkState.Emitter {
        final List<String> handed = new ArrayList<>();

        @Override
        public void watermark(int input, long timestamp) {
            handed.add(input + ":" + timestamp);
        }

        @Override
        public void status(int input, boolean idle) {
            handed.add(input + ":" + (idle ? "idle" : "active"));
        }

        @Override
        public void combined(long[] watermarks, boolean[] idle) {
            handed.add("combined:" + java.util.Arrays.toString(watermarks));
        }
    }

    @Test
    void aRunningTaskLogsTheWatermarksItsInputsHandOnAndDropsOnesThatDoNotAdvance()
            throws Exception {
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(LOG, 5),
                        CausalRecovery.notRecovering("task", LOG),
                        2,
                        1,
                        -1);
        task.watermarks().setInputs(2, new Handed());
        task.processingStarted();

        task.beforeElement();
        assertThat(task.watermarks().watermark(0, 100)).isTrue();
        assertThat(task.watermarks().watermark(0, 100)).as("no advance").isFalse();
        task.beforeElement();
        assertThat(task.watermarks().watermarkStatus(1, true)).isTrue();
        assertThat(task.watermarks().watermarkStatus(1, true)).as("no change").isFalse();
        task.epochStarted(6);

        assertThat(logged(task, 5))
                .containsExactly(
                        new Determinant.Watermark(1, 0, 100),
                        new Determinant.WatermarkStatus(2, 1, true));
        assertThat(logged(task, 6))
                .as("a new epoch begins with what each input last handed on")
                .containsExactly(
                        new Determinant.InputWatermarks(
                                new long[] {100, Long.MIN_VALUE}, new boolean[] {false, true}));
    }

    @Test
    void aRecoveringTaskHandsOnTheLoggedWatermarksAtTheirOffsetsAndNoneOfItsOwn() {
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(LOG, 5),
                        replaying(
                                new Determinant.InputWatermarks(
                                        new long[] {50, 70}, new boolean[] {false, false}),
                                new Determinant.Watermark(2, 1, 90),
                                new Determinant.Timestamp(3, 1000)),
                        2,
                        1,
                        -1);
        Handed handed = new Handed();
        task.watermarks().setInputs(2, handed);
        task.processingStarted();

        task.fireDueTimers();
        assertThat(handed.handed)
                .as("the restored epoch's combination, before the first element")
                .containsExactly("combined:[50, 70]");
        task.beforeElement();
        assertThat(task.watermarks().watermark(0, 60))
                .as("the task's own watermark while it replays")
                .isFalse();
        task.beforeElement();
        task.beforeElement();
        assertThat(handed.handed).containsExactly("combined:[50, 70]", "1:90");
        assertThat(task.timestamp(() -> 5)).as("the replay goes on in step").isEqualTo(1000);
        assertThat(task.recovery().isRunning()).isTrue();
        assertThat(task.watermarks().watermark(1, 90))
                .as("the clock of input 1 stands where the replay left it")
                .isFalse();
        assertThat(task.watermarks().watermark(1, 95)).isTrue();
    }

    @Test
    void aRecoveredTaskMakesNoChoiceOfItsOwnWhileItsOutputRegeneratesWhatConsumersHave() {
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(LOG, 5),
                        replaying(new Determinant.Timestamp(0, 1000)),
                        1,
                        1,
                        -1);
        task.watermarks().setInputs(1, new Handed());
        AtomicBoolean deduplicating = new AtomicBoolean(true);
        task.setRegeneratesPredecessorStream(deduplicating::get);
        task.processingStarted();
        task.timestamp(() -> 5);
        assertThat(task.recovery().isRunning()).isTrue();

        assertThat(task.choosesFreely()).isFalse();
        assertThat(task.watermarks().watermark(0, 10)).isFalse();
        deduplicating.set(false);
        assertThat(task.choosesFreely()).isTrue();
        deduplicating.set(true);
        assertThat(task.choosesFreely()).as("once past, for good").isTrue();
        assertThat(task.watermarks().watermark(0, 10)).isTrue();
    }

    @Test
    void aTaskWithOneInputBeginsAnEpochWithWhatItsInputLastHandedOn() throws Exception {
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(LOG, 5),
                        CausalRecovery.notRecovering("task", LOG),
                        1,
                        1,
                        -1);
        task.watermarks().setInputs(1, new Handed());
        task.processingStarted();
        task.epochStarted(6);
        assertThat(logged(task, 6)).as("nothing handed on yet: nothing to restore").isEmpty();

        assertThat(task.watermarks().watermark(0, 100)).isTrue();
        assertThat(task.watermarks().watermarkStatus(0, true)).isTrue();
        assertThat(task.watermarks().isInputIdle(0)).isTrue();
        task.epochStarted(7);
        assertThat(logged(task, 7))
                .containsExactly(
                        new Determinant.InputWatermarks(new long[] {100}, new boolean[] {true}));
    }

    /**
     * The source's case: idle before the restored checkpoint, so its predecessor's outputs had
     * announced idleness and sent the next active status; the recovered outputs are told before the
     * first element, and the logged active status is handed on.
     */
    @Test
    void aReplayWhoseEpochBeganWithEveryInputIdleAnnouncesTheOutputsIdle() {
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(LOG, 5),
                        replaying(
                                new Determinant.InputWatermarks(
                                        new long[] {100}, new boolean[] {true}),
                                new Determinant.WatermarkStatus(1, 0, false),
                                new Determinant.Timestamp(1, 1000)),
                        1,
                        1,
                        -1);
        Handed handed = new Handed();
        task.watermarks().setInputs(1, handed);
        task.watermarks().setIdleOutputs(() -> handed.handed.add("outputs idle"));
        task.processingStarted();

        task.fireDueTimers();
        assertThat(handed.handed)
                .as("one input: nothing to combine, but the outputs announced idleness")
                .containsExactly("outputs idle");
        assertThat(task.watermarks().isInputIdle(0)).isTrue();
        task.beforeElement();
        task.fireDueTimers();
        assertThat(handed.handed).containsExactly("outputs idle", "0:active");
        assertThat(task.watermarks().isInputIdle(0)).isFalse();
    }

    @Test
    void aReplayWhoseEpochBeganWithOneInputActiveLeavesTheOutputsActive() {
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(LOG, 5),
                        replaying(
                                new Determinant.InputWatermarks(
                                        new long[] {50, 70}, new boolean[] {true, false}),
                                new Determinant.Timestamp(0, 1000)),
                        2,
                        1,
                        -1);
        Handed handed = new Handed();
        task.watermarks().setInputs(2, handed);
        task.watermarks().setIdleOutputs(() -> handed.handed.add("outputs idle"));
        task.processingStarted();

        task.fireDueTimers();
        assertThat(handed.handed).containsExactly("combined:[50, 70]");
    }

    @Test
    void aReplayWhoseInputsReachOtherWatermarksAtAnEpochsStartDiverges() {
        CausalTask task = new CausalTask(new TaskCausalLog(LOG, 5), replayingTwoEpochs(), 2, 1, -1);
        task.watermarks().setInputs(2, new Handed());
        task.processingStarted();
        task.fireDueTimers();
        // the replay handed on 40 on input 0, but by the log epoch 6 began with 41
        assertThatThrownBy(() -> task.epochStarted(6))
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("InputWatermarks");
    }

    /** Epoch 5 hands on 40 on input 0; epoch 6 begins, by the log, with input 0 at 41. */
    private static CausalRecovery replayingTwoEpochs() {
        TaskCausalLog predecessor = new TaskCausalLog(LOG, 5);
        predecessor.append(new Determinant.Watermark(0, 0, 40));
        predecessor.startEpoch(6);
        predecessor.append(
                new Determinant.InputWatermarks(
                        new long[] {41, Long.MIN_VALUE}, new boolean[] {false, false}));
        predecessor.append(new Determinant.Timestamp(0, 9));
        return replaying(predecessor);
    }
}
