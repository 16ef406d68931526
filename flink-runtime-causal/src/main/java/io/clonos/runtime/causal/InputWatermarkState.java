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

import javax.annotation.Nullable;

import java.util.Arrays;

/**
 * What each input of a task last handed its operators: watermark and idleness. Flink restores
 * neither a watermark generator, nor a valve, nor a two-input operator's combined watermark; the
 * task logs what its inputs hand on ({@link CausalWatermarks#watermark}) and, while it replays,
 * hands on the logged values through the task's {@link Emitter}. Task thread only.
 */
@Internal
public final class InputWatermarkState {

    /** Hands on what the log says a task's inputs handed its operators, during a replay. */
    public interface Emitter {
        void watermark(int input, long timestamp);

        void status(int input, boolean idle);

        /**
         * The restored epoch began with these per-input watermarks: the operators combine from
         * them.
         */
        void combined(long[] watermarks, boolean[] idle);
    }

    /** A task without inputs of its own has nothing to hand on. */
    private static final Emitter NO_INPUTS =
            new Emitter() {
                @Override
                public void watermark(int input, long timestamp) {
                    throw new LocalRecoveryImpossibleException(
                            "The task has no input to replay watermark "
                                    + timestamp
                                    + " of input "
                                    + input);
                }

                @Override
                public void status(int input, boolean idle) {
                    throw new LocalRecoveryImpossibleException(
                            "The task has no input to replay a watermark status of input " + input);
                }

                @Override
                public void combined(long[] watermarks, boolean[] idle) {
                    throw new LocalRecoveryImpossibleException(
                            "The task has no operator to restore input watermarks to");
                }
            };

    private long[] watermarks = new long[0];
    private boolean[] idle = new boolean[0];
    private Emitter emitter = NO_INPUTS;

    /** Announces the task's outputs idle without emitting anything; see {@link #replay}. */
    private Runnable idleOutputs = () -> {};

    void setInputs(int inputs, Emitter emitter) {
        this.watermarks = new long[inputs];
        Arrays.fill(watermarks, Long.MIN_VALUE);
        this.idle = new boolean[inputs];
        this.emitter = emitter;
    }

    void setIdleOutputs(Runnable idleOutputs) {
        this.idleOutputs = idleOutputs;
    }

    /** Whether input {@code input} last handed on an idle status. */
    boolean isIdle(int input) {
        return idle[input];
    }

    /** Whether {@code timestamp} advances input {@code input}'s watermark; notes it if it does. */
    boolean advance(int input, long timestamp) {
        if (timestamp <= watermarks[input]) {
            return false;
        }
        watermarks[input] = timestamp;
        return true;
    }

    /** Whether input {@code input}'s idleness changes; notes it if it does. */
    boolean changeStatus(int input, boolean nowIdle) {
        if (nowIdle == idle[input]) {
            return false;
        }
        idle[input] = nowIdle;
        return true;
    }

    /**
     * What the inputs of a task last handed on, for the operators that combine them and for the
     * status the task's outputs announced; null without inputs or before any handed anything on.
     */
    @Nullable
    Determinant.InputWatermarks combined() {
        for (int i = 0; i < watermarks.length; i++) {
            if (watermarks[i] != Long.MIN_VALUE || idle[i]) {
                return new Determinant.InputWatermarks(watermarks, idle);
            }
        }
        return null;
    }

    void replay(Determinant.Watermark watermark) {
        watermarks[watermark.input()] = watermark.timestamp();
        emitter.watermark(watermark.input(), watermark.timestamp());
    }

    void replay(Determinant.WatermarkStatus status) {
        idle[status.input()] = status.idle();
        emitter.status(status.input(), status.idle());
    }

    /**
     * The restored epoch began with these: the operators combine their inputs from here. With every
     * input idle, the predecessor's outputs had announced the idle status (in an earlier epoch) and
     * dropped watermarks; Flink's outputs keep that in fields no checkpoint holds, so the recovered
     * ones are told, or they would drop the next active status instead of sending it.
     */
    void replay(Determinant.InputWatermarks restored) {
        watermarks = restored.watermarks();
        idle = restored.idle();
        if (watermarks.length > 1) {
            emitter.combined(restored.watermarks(), restored.idle());
        }
        boolean allIdle = idle.length > 0;
        for (boolean inputIdle : idle) {
            allIdle &= inputIdle;
        }
        if (allIdle) {
            idleOutputs.run();
        }
    }
}
