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
import org.apache.flink.runtime.event.RuntimeEvent;

import java.io.IOException;

/**
 * The first thing a consumer receives on every connection to a Clonos subpartition: the epoch from
 * which the stream that follows starts. The stream is the producer's in-flight log from that epoch
 * on, then live data. A consumer restored from checkpoint {@code c} skips the stream up to barrier
 * {@code c} when it starts earlier; {@link #FROM_PRODUCER_START} means the stream holds everything
 * the producer sent since it (re)started.
 *
 * <p>The consumer's Clonos input gate removes this event; Flink's tasks never see it.
 */
@Internal
public final class ReplayStartEvent extends RuntimeEvent {

    /** The stream starts with the producer's first output since it started or was restored. */
    public static final long FROM_PRODUCER_START = -1;

    private long epoch;

    /** For deserialization. */
    public ReplayStartEvent() {}

    public ReplayStartEvent(long epoch) {
        this.epoch = epoch;
    }

    public long getEpoch() {
        return epoch;
    }

    @Override
    public void write(DataOutputView out) throws IOException {
        out.writeLong(epoch);
    }

    @Override
    public void read(DataInputView in) throws IOException {
        epoch = in.readLong();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ReplayStartEvent && ((ReplayStartEvent) o).epoch == epoch;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(epoch);
    }

    @Override
    public String toString() {
        return "ReplayStartEvent{epoch="
                + (epoch == FROM_PRODUCER_START ? "producer start" : epoch)
                + '}';
    }
}
