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

package io.clonos.streaming.source;

import org.apache.flink.annotation.Internal;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The records a replaying reader took from its splits ahead of their turn: the reader delivers its
 * splits in an order of its own, the replay emits them in its predecessor's. Records are kept per
 * split in the order the split delivered them, which is the split's own order.
 */
@Internal
final class HeldRecords<T> {

    /** A record as the reader emitted it, with its timestamp if it gave one. */
    record Held<T>(T record, long timestamp, boolean hasTimestamp) {}

    private final Map<String, ArrayDeque<Held<T>>> bySplit = new LinkedHashMap<>();
    private long size;

    void add(String splitId, T record, long timestamp, boolean hasTimestamp) {
        bySplit.computeIfAbsent(splitId, id -> new ArrayDeque<>())
                .add(new Held<>(record, timestamp, hasTimestamp));
        size++;
    }

    boolean has(String splitId) {
        ArrayDeque<Held<T>> held = bySplit.get(splitId);
        return held != null && !held.isEmpty();
    }

    /** The split's next record; the split must have one. */
    Held<T> take(String splitId) {
        ArrayDeque<Held<T>> held = bySplit.get(splitId);
        if (held == null || held.isEmpty()) {
            throw new IllegalStateException("No record of split " + splitId + " is held");
        }
        Held<T> next = held.poll();
        if (held.isEmpty()) {
            bySplit.remove(splitId);
        }
        size--;
        return next;
    }

    /** The split of the oldest group of held records, to emit first; null when none is held. */
    String firstSplit() {
        Iterator<String> splits = bySplit.keySet().iterator();
        return splits.hasNext() ? splits.next() : null;
    }

    boolean isEmpty() {
        return size == 0;
    }

    long size() {
        return size;
    }
}
