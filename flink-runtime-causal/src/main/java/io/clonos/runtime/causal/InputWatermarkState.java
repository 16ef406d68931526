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

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What each input of a task last handed its operators, and what each watermark assigner chained
 * into the task last emitted: watermark and idleness. Flink restores neither a watermark generator,
 * nor a valve, nor a two-input operator's combined watermark; the task logs what its inputs and
 * assigners hand on ({@link CausalWatermarks#watermark}, {@link
 * CausalWatermarks#assignerWatermark}) and, while it replays, hands on the logged values through
 * the task's {@link Emitter} and the assigners' {@link AssignerEmitter}s. Task thread only.
 *
 * <p>The log numbers the watermark sources of a task: its inputs first, then its assigners in the
 * order they were added, which is the order Flink creates a chain's operators in every attempt.
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

    /**
     * Hands on, during a replay, what the log says one watermark assigner chained into the task
     * emitted.
     */
    public interface AssignerEmitter {
        void watermark(long timestamp);

        void status(boolean idle);

        /**
         * The restored epoch began with the assigner's last status {@code idle}: the outputs behind
         * it are told that they announced it, and nothing is sent.
         */
        void restoreStatus(boolean idle);
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

    /** Per watermark source: the inputs, then the assigners. */
    private long[] watermarks = new long[0];

    private boolean[] idle = new boolean[0];
    private int inputs;
    private Emitter emitter = NO_INPUTS;
    private final List<AssignerEmitter> assigners = new ArrayList<>();

    /** Announces the task's outputs idle without emitting anything; see {@link #replay}. */
    private Runnable idleOutputs = () -> {};

    void setInputs(int inputs, Emitter emitter) {
        this.inputs = inputs;
        this.emitter = emitter;
        resize();
    }

    /** Adds an assigner; returns its number among the assigners. */
    int addAssigner(AssignerEmitter assigner) {
        assigners.add(assigner);
        resize();
        return assigners.size() - 1;
    }

    /** The number of assigner {@code assigner} among the task's watermark sources. */
    int sourceOfAssigner(int assigner) {
        return inputs + assigner;
    }

    /** Before the task processes anything: every source starts with nothing handed on. */
    private void resize() {
        watermarks = new long[inputs + assigners.size()];
        Arrays.fill(watermarks, Long.MIN_VALUE);
        idle = new boolean[watermarks.length];
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
        int source = checkedSource(watermark.input(), watermark);
        watermarks[source] = watermark.timestamp();
        if (source < inputs) {
            emitter.watermark(source, watermark.timestamp());
        } else {
            assigners.get(source - inputs).watermark(watermark.timestamp());
        }
    }

    void replay(Determinant.WatermarkStatus status) {
        int source = checkedSource(status.input(), status);
        idle[source] = status.idle();
        if (source < inputs) {
            emitter.status(source, status.idle());
        } else {
            assigners.get(source - inputs).status(status.idle());
        }
    }

    private int checkedSource(int source, Determinant logged) {
        if (source >= watermarks.length) {
            throw new LocalRecoveryImpossibleException(
                    "The recovered task has "
                            + inputs
                            + " inputs and "
                            + assigners.size()
                            + " watermark assigners, and no source of "
                            + logged);
        }
        return source;
    }

    /**
     * The restored epoch began with these: the operators combine their inputs from here. With every
     * input idle, the predecessor's outputs had announced the idle status (in an earlier epoch) and
     * dropped watermarks; Flink's outputs keep that in fields no checkpoint holds, so the recovered
     * ones are told, or they would drop the next active status instead of sending it.
     */
    void replay(Determinant.InputWatermarks restored) {
        if (restored.watermarks().length != watermarks.length) {
            throw new LocalRecoveryImpossibleException(
                    "The recovered task has "
                            + watermarks.length
                            + " watermark sources where its predecessor had "
                            + restored);
        }
        watermarks = restored.watermarks();
        idle = restored.idle();
        if (inputs > 1) {
            emitter.combined(Arrays.copyOf(watermarks, inputs), Arrays.copyOf(idle, inputs));
        }
        boolean allIdle = inputs > 0;
        for (int input = 0; input < inputs; input++) {
            allIdle &= idle[input];
        }
        if (allIdle) {
            idleOutputs.run();
        }
        // an assigner ignores the status of its input: the outputs behind it announced its own
        for (int assigner = 0; assigner < assigners.size(); assigner++) {
            assigners.get(assigner).restoreStatus(idle[inputs + assigner]);
        }
    }
}
