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
import org.apache.flink.runtime.event.TaskEvent;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A consumer's answer to a (re)started producer, sent upstream on every new connection: the
 * producer's determinants the consumer holds, and how many data bytes of the producer's stream it
 * has received per epoch. A recovering producer replays with the determinants of all its consumers
 * and then skips, per consumer, the bytes that consumer already has; a producer that is not
 * recovering ignores the answer.
 *
 * <p>A consumer that recovers too says whether it still replays: its replay reads the producer's
 * regenerated stream as its predecessor read the original one, so the producer must not cut a fresh
 * epoch into that stream (a source's new checkpoint barrier) until the consumer's {@link
 * ReplayEndEvent}; the barrier would land among records the replay must read before it.
 */
@Internal
public final class DeterminantResponseEvent extends TaskEvent {

    private int subpartition;

    /** Per epoch: data bytes received and their CRC-32C. */
    private TreeMap<Long, long[]> received = new TreeMap<>();

    private List<byte[]> serializedDeltas = List.of();
    private boolean consumerReplays;

    /** For deserialization. */
    public DeterminantResponseEvent() {}

    public DeterminantResponseEvent(
            int subpartition,
            Map<Long, EpochBytes> received,
            List<SharedDelta> deltas,
            boolean consumerReplays) {
        this.subpartition = subpartition;
        this.consumerReplays = consumerReplays;
        received.forEach(
                (epoch, bytes) ->
                        this.received.put(epoch, new long[] {bytes.bytes(), bytes.checksum()}));
        this.serializedDeltas = DeltaLists.encode(deltas);
    }

    /** The producer's subpartition the consumer reads. */
    public int subpartition() {
        return subpartition;
    }

    /** Data bytes the consumer received from epoch {@code epoch} on. */
    public long deliveredBytesFrom(long epoch) {
        return received.tailMap(epoch, true).values().stream().mapToLong(r -> r[0]).sum();
    }

    /** Per epoch from {@code epoch} on: data bytes the consumer received and their CRC-32C. */
    public TreeMap<Long, long[]> receivedFrom(long epoch) {
        return new TreeMap<>(received.tailMap(epoch, true));
    }

    /**
     * Whether the consumer still replays its predecessor's reads; it sends a {@link ReplayEndEvent}
     * when done.
     */
    public boolean consumerReplays() {
        return consumerReplays;
    }

    public List<SharedDelta> deltas() throws CorruptCausalLogException {
        return DeltaLists.decode(serializedDeltas);
    }

    @Override
    public void write(DataOutputView out) throws IOException {
        out.writeInt(subpartition);
        out.writeBoolean(consumerReplays);
        out.writeInt(received.size());
        for (Map.Entry<Long, long[]> e : received.entrySet()) {
            out.writeLong(e.getKey());
            out.writeLong(e.getValue()[0]);
            out.writeLong(e.getValue()[1]);
        }
        DeltaLists.write(serializedDeltas, out);
    }

    @Override
    public void read(DataInputView in) throws IOException {
        subpartition = in.readInt();
        consumerReplays = in.readBoolean();
        int epochs = in.readInt();
        if (epochs < 0) {
            throw new IOException("Corrupt determinant response: " + epochs + " epochs");
        }
        received = new TreeMap<>();
        for (int i = 0; i < epochs; i++) {
            received.put(in.readLong(), new long[] {in.readLong(), in.readLong()});
        }
        serializedDeltas = DeltaLists.read(in);
    }

    @Override
    public String toString() {
        return "DeterminantResponseEvent{subpartition="
                + subpartition
                + ", epochs="
                + received.keySet()
                + ", "
                + serializedDeltas.size()
                + " deltas"
                + (consumerReplays ? ", consumer replays" : "")
                + '}';
    }
}
