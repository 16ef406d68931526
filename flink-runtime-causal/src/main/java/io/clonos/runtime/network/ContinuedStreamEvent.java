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
 * Sent by a producer with causal logging before its first data on every connection, saying how the
 * stream relates to what the consumer received from the producer's predecessor. A producer
 * recovered with determinants continues the stream exactly where the consumer's previous connection
 * left off, the bytes the consumer already had being skipped. Any other producer starts afresh
 * ({@link #FRESH}): at a record boundary, with a causal log of its own, so the consumer drops the
 * partial record the dead producer left behind and what it held of its log.
 */
@Internal
public final class ContinuedStreamEvent extends RuntimeEvent {

    /** The stream starts afresh. */
    public static final long FRESH = -1;

    private long skippedBytes;

    /** For deserialization. */
    public ContinuedStreamEvent() {}

    public ContinuedStreamEvent(long skippedBytes) {
        this.skippedBytes = skippedBytes;
    }

    public long skippedBytes() {
        return skippedBytes;
    }

    public boolean isFresh() {
        return skippedBytes == FRESH;
    }

    @Override
    public void write(DataOutputView out) throws IOException {
        out.writeLong(skippedBytes);
    }

    @Override
    public void read(DataInputView in) throws IOException {
        skippedBytes = in.readLong();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ContinuedStreamEvent
                && ((ContinuedStreamEvent) o).skippedBytes == skippedBytes;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(skippedBytes);
    }

    @Override
    public String toString() {
        return isFresh()
                ? "ContinuedStreamEvent{fresh}"
                : "ContinuedStreamEvent{skipped=" + skippedBytes + '}';
    }
}
