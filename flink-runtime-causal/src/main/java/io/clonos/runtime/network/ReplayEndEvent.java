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

import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.runtime.event.TaskEvent;

import java.io.IOException;

/**
 * A recovering consumer, sent upstream when its replay ended: it read everything its predecessor
 * had read of the producer's stream, so a fresh epoch may start there. Follows a {@link
 * DeterminantResponseEvent} that said the consumer replays; a producer that held nothing for the
 * consumer ignores it.
 */
@Internal
public final class ReplayEndEvent extends TaskEvent {

    private int subpartition;

    /** For deserialization. */
    public ReplayEndEvent() {}

    public ReplayEndEvent(int subpartition) {
        this.subpartition = subpartition;
    }

    /** The producer's subpartition the consumer reads. */
    public int subpartition() {
        return subpartition;
    }

    @Override
    public void write(DataOutputView out) throws IOException {
        out.writeInt(subpartition);
    }

    @Override
    public void read(DataInputView in) throws IOException {
        subpartition = in.readInt();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ReplayEndEvent && ((ReplayEndEvent) o).subpartition == subpartition;
    }

    @Override
    public int hashCode() {
        return subpartition;
    }

    @Override
    public String toString() {
        return "ReplayEndEvent{subpartition=" + subpartition + '}';
    }
}
