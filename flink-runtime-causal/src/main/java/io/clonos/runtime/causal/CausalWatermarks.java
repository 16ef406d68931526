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

import org.apache.flink.annotation.Internal;

/**
 * What each input of a task hands its operators, and what each watermark assigner chained into it
 * emits (watermarks, watermark statuses), as determinants: the watermarks a recovered input or
 * assigner computes depend on what it saw before the checkpoint, which Flink does not restore, so a
 * replay hands on the logged ones instead, at their places. Task thread.
 */
@Internal
public final class CausalWatermarks {

    private final CausalTask task;
    private final InputWatermarkState inputs = new InputWatermarkState();

    CausalWatermarks(CausalTask task) {
        this.task = task;
    }

    /**
     * The task's inputs hand on watermarks through {@link #watermark}; a replay hands them on with
     * {@code emitter}.
     */
    public void setInputs(int count, InputWatermarkState.Emitter emitter) {
        inputs.setInputs(count, emitter);
    }

    /**
     * Adds a watermark assigner chained into the task (Flink's {@code
     * assignTimestampsAndWatermarks}, the SQL planner's watermark assigner): its watermark
     * generator is in no checkpoint, so what it emits is logged and replayed as an input's is.
     * Assigners are added in the same order in every attempt; returns the assigner's number.
     */
    public int addAssigner(InputWatermarkState.AssignerEmitter replay) {
        return inputs.addAssigner(replay);
    }

    /**
     * Assigner {@code assigner} is about to emit watermark {@code timestamp}: whether it may. As
     * {@link #watermark} for an input: running normally it may if the watermark advances, and it is
     * logged; recovering, only the replay emits the logged ones.
     */
    public boolean assignerWatermark(int assigner, long timestamp) {
        return watermark(inputs.sourceOfAssigner(assigner), timestamp);
    }

    /** As {@link #watermarkStatus}, for assigner {@code assigner}. */
    public boolean assignerStatus(int assigner, boolean idle) {
        return watermarkStatus(inputs.sourceOfAssigner(assigner), idle);
    }

    /** As {@link #isInputIdle}, for assigner {@code assigner}. */
    public boolean isAssignerIdle(int assigner) {
        return isInputIdle(inputs.sourceOfAssigner(assigner));
    }

    /** Announces the outputs idle, unsent: a restored epoch began with every input idle. */
    public void setIdleOutputs(Runnable idleOutputs) {
        inputs.setIdleOutputs(idleOutputs);
    }

    /**
     * Whether input {@code input} is idle: a watermark must follow an active status (a recovered
     * source does not know that its predecessor went idle before the restored checkpoint).
     */
    public boolean isInputIdle(int input) {
        return task.isProcessing() && inputs.isIdle(input);
    }

    /**
     * Input {@code input} is about to hand its operators watermark {@code timestamp}: whether it
     * may. Running normally it may, if the watermark advances, and it is logged. While the task
     * recovers it may not: the replay hands on the logged ones ({@link CausalTask#fireNextDue});
     * nor may it while its output regenerates what consumers received ({@link
     * CausalTask#choosesFreely}).
     */
    public boolean watermark(int input, long timestamp) {
        if (!task.isProcessing()) {
            return true;
        }
        if (!task.choosesFreely() || !inputs.advance(input, timestamp)) {
            return false;
        }
        task.log().append(new Determinant.Watermark(task.elementsInEpoch(), input, timestamp));
        return true;
    }

    /**
     * As {@link #watermark}, for a watermark status: whether input {@code input} may hand it on.
     */
    public boolean watermarkStatus(int input, boolean idle) {
        if (!task.isProcessing()) {
            return true;
        }
        if (!task.choosesFreely() || !inputs.changeStatus(input, idle)) {
            return false;
        }
        task.log().append(new Determinant.WatermarkStatus(task.elementsInEpoch(), input, idle));
        return true;
    }

    /**
     * At the start of an epoch, a task logs what each input last handed its operators (operators
     * with several inputs combine them, and the outputs announced idleness from them); a replay
     * checks that it got there too.
     */
    void logAtEpochStart() {
        Determinant.InputWatermarks current = inputs.combined();
        if (current == null || !task.isProcessing()) {
            return;
        }
        Determinant.InputWatermarks logged =
                task.decide(Determinant.InputWatermarks.class, () -> current);
        if (!logged.equals(current)) {
            throw new LocalRecoveryImpossibleException(
                    "The recovered task's inputs reached "
                            + current
                            + " where its predecessor's had "
                            + logged);
        }
    }

    /** Replays a logged watermark, status or epoch start; false if {@code action} is none. */
    boolean replay(Determinant action) {
        if (action instanceof Determinant.Watermark watermark) {
            inputs.replay(watermark);
        } else if (action instanceof Determinant.WatermarkStatus status) {
            inputs.replay(status);
        } else if (action instanceof Determinant.InputWatermarks restored) {
            inputs.replay(restored);
        } else {
            return false;
        }
        return true;
    }
}
