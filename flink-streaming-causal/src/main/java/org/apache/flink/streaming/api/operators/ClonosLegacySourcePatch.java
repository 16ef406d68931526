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

package org.apache.flink.streaming.api.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import java.util.function.UnaryOperator;

/**
 * <b>Patch of Flink's behaviour.</b> Puts a wrapper around the output of a legacy {@link
 * StreamSource}, through which the source function's own thread emits, so that Clonos counts the
 * records it emits (the offsets at which checkpoints and timers interleave with them, logged and
 * replayed) and gates its watermarks. The operator's output is a protected field of {@link
 * AbstractStreamOperator} without a setter, set up by the operator chain; it is replaced here (this
 * package may), after the chain set it up and before the source function runs.
 */
@Internal
public final class ClonosLegacySourcePatch {

    private ClonosLegacySourcePatch() {}

    /** Replaces the operator's output by {@code wrap} applied to it. */
    public static <T> void wrapOutput(
            StreamSource<T, ?> operator, UnaryOperator<Output<StreamRecord<T>>> wrap) {
        if (operator.output == null) {
            throw new IllegalStateException("The legacy source operator has no output yet");
        }
        operator.output = wrap.apply(operator.output);
    }
}
