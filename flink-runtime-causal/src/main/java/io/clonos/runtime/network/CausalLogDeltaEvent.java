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

package io.clonos.runtime.network;

import io.clonos.runtime.causal.CorruptCausalLogException;
import io.clonos.runtime.causal.SharedDelta;

import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.runtime.event.RuntimeEvent;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The causal log bytes a producer piggybacks on its output: sent on a subpartition right before a
 * data buffer, it carries what the consumer has not been sent yet of the logs the consumer must
 * hold. The consumer's Clonos input gate stores it and removes it from the stream before the
 * buffer's records reach the task.
 *
 * <p>The deltas travel as their checksummed serialized form and are decoded by the consumer, so
 * that corrupt bytes surface as {@link CorruptCausalLogException} there rather than as a broken
 * network channel.
 */
@Internal
public final class CausalLogDeltaEvent extends RuntimeEvent {

    private List<byte[]> serializedDeltas = new ArrayList<>();

    /** For deserialization. */
    public CausalLogDeltaEvent() {}

    public CausalLogDeltaEvent(List<SharedDelta> deltas) {
        this.serializedDeltas = DeltaLists.encode(deltas);
    }

    public List<SharedDelta> deltas() throws CorruptCausalLogException {
        return DeltaLists.decode(serializedDeltas);
    }

    @Override
    public void write(DataOutputView out) throws IOException {
        DeltaLists.write(serializedDeltas, out);
    }

    @Override
    public void read(DataInputView in) throws IOException {
        serializedDeltas = DeltaLists.read(in);
    }

    @Override
    public String toString() {
        return "CausalLogDeltaEvent{" + serializedDeltas.size() + " deltas}";
    }
}
