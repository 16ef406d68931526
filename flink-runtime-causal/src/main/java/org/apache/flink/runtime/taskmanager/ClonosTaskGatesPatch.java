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

package org.apache.flink.runtime.taskmanager;

import io.clonos.runtime.reflect.ReflectedField;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;

/**
 * PATCH of Flink's behaviour, kept to this one class in Flink's package.
 *
 * <p>Why: Flink's task wraps every input gate the shuffle environment made in an {@link
 * InputGateWithMetrics}, which keeps the gate in a private field without getter. A Clonos task must
 * reach its own gates (to enable causal logging on them, and to find its TaskManager's Clonos
 * context), so this reads the field by reflection.
 */
@Internal
public final class ClonosTaskGatesPatch {

    private static final ReflectedField INPUT_GATE =
            ReflectedField.of(InputGateWithMetrics.class, "inputGate");

    private ClonosTaskGatesPatch() {}

    /** The gate a task's gate wraps; the gate itself if it wraps nothing. */
    public static IndexedInputGate unwrap(IndexedInputGate gate) {
        return gate instanceof InputGateWithMetrics
                ? (IndexedInputGate) INPUT_GATE.get(gate)
                : gate;
    }
}
