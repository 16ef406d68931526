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

package io.clonos.connector.kafka;

import io.clonos.runtime.causal.SharedDelta;
import io.clonos.runtime.network.DeltaLists;

import org.apache.flink.annotation.Internal;

import javax.annotation.Nullable;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The determinants a writer read from its task's logs that no acknowledged record carries yet.
 * Every publication attaches all of them to its first record of each partition; once such a record
 * is acknowledged, every determinant it carried is durable and leaves this set. So each visible
 * record has, in itself or in records acknowledged before it was sent, every determinant read
 * before it was sent, and the union of what the visible records carry is a prefix of what the
 * writer read, without gaps. Kafka keeps a producer's records of one partition in order and without
 * gaps, so a record that a successor finds had all of its partition's earlier records of the
 * publication, the carrier among them, acknowledged or written too.
 *
 * <p>Everything but {@link #durableUpTo} runs on the task thread; acknowledgements come from the
 * producer's thread.
 */
@Internal
final class UndurableDeterminants {

    private record Entry(long index, SharedDelta delta, int bytes) {}

    private final Deque<Entry> entries = new ArrayDeque<>();
    private final AtomicLong durable = new AtomicLong(-1);
    private long nextIndex;
    private long bytes;
    @Nullable private byte[] encoded;

    /** Adds what the writer read from the task's logs now. */
    void add(List<SharedDelta> deltas) {
        for (SharedDelta delta : deltas) {
            int size = delta.delta().bytes().length;
            entries.addLast(new Entry(nextIndex++, delta, size));
            bytes += size;
            encoded = null;
        }
    }

    /** The index of the last delta added; -1 if none was. */
    long lastIndex() {
        return nextIndex - 1;
    }

    /** A record that carried every delta up to {@code index} was acknowledged (any thread). */
    void durableUpTo(long index) {
        durable.accumulateAndGet(index, Math::max);
    }

    /** The determinants to attach to a publication's carriers; null when all are durable. */
    @Nullable
    byte[] header() {
        dropDurable();
        if (entries.isEmpty()) {
            return null;
        }
        if (encoded == null) {
            List<SharedDelta> deltas = new ArrayList<>(entries.size());
            for (Entry entry : entries) {
                deltas.add(entry.delta);
            }
            encoded = DeltaLists.toBytes(deltas);
        }
        return encoded;
    }

    /** The determinant bytes not yet durable. */
    long bytes() {
        dropDurable();
        return bytes;
    }

    private void dropDurable() {
        long upTo = durable.get();
        while (!entries.isEmpty() && entries.peekFirst().index <= upTo) {
            bytes -= entries.removeFirst().bytes;
            encoded = null;
        }
    }
}
