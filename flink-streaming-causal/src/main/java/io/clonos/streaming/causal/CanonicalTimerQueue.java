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

package io.clonos.streaming.causal;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSet;
import org.apache.flink.util.CloseableIterator;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A timer queue whose elements of equal priority (timers due at the same instant) leave in one
 * canonical order: by their serialized form, which for Flink's timers is timestamp, key and
 * namespace, the order in which RocksDB keeps them.
 *
 * <p>Flink's heap queue breaks ties by its history: a restored heap is rebuilt from the checkpoint
 * in another order than it grew before, so a recovered task would fire the windows of its keys in
 * another order than its predecessor and send its consumers other bytes. With ties broken by
 * content the order follows from the set of due timers alone, which the replay reproduces.
 *
 * <p>The elements stay in the backend's queue until they are polled (its snapshots see them all);
 * this only chooses which one of the tied head elements leaves next.
 */
@Internal
final class CanonicalTimerQueue<T extends PriorityComparable<? super T>>
        implements KeyGroupedInternalPriorityQueue<T> {

    private final KeyGroupedInternalPriorityQueue<T> queue;
    private final TypeSerializer<T> serializer;
    private final DataOutputSerializer out = new DataOutputSerializer(64);

    /**
     * Every element of the head's priority with its serialized form, in reverse canonical order:
     * the head last, so that polling the ties one by one does not shift the rest. Null when not
     * known.
     */
    @Nullable private List<Serialized<T>> ties;

    /**
     * The elements of {@link #ties}: a timer registered again (every record of a window registers
     * its end) is found without serializing it.
     */
    private final Set<T> tied = new HashSet<>();

    /**
     * Whether the backend's queue counts its elements in a field ({@link HeapPriorityQueueSet}), so
     * that comparing its size before and after an add tells a timer registered again (every record
     * of a window registers its end, twice) without hashing it once more; RocksDB's queue sums its
     * key groups' sizes, and there the set of ties is asked instead.
     */
    private final boolean sizeIsCheap;

    CanonicalTimerQueue(KeyGroupedInternalPriorityQueue<T> queue, TypeSerializer<T> serializer) {
        this.queue = queue;
        this.serializer = serializer.duplicate();
        this.sizeIsCheap = queue instanceof HeapPriorityQueueSet;
    }

    @Nullable
    @Override
    public T peek() {
        List<Serialized<T>> head = ties();
        return head.isEmpty() ? null : head.get(head.size() - 1).element();
    }

    @Nullable
    @Override
    public T poll() {
        List<Serialized<T>> head = ties();
        if (head.isEmpty()) {
            return null;
        }
        T first = head.remove(head.size() - 1).element();
        tied.remove(first);
        queue.remove(first);
        if (head.isEmpty()) {
            forgetTies();
        }
        return first;
    }

    /**
     * Adds as the backend's queue does; an element of the head's priority takes its place among the
     * ties, so that a task registering many timers of one instant does not collect them anew.
     */
    @Override
    public boolean add(T element) {
        int sizeBefore = sizeIsCheap ? queue.size() : -1;
        boolean headChanged = queue.add(element);
        if (ties == null || (sizeIsCheap && queue.size() == sizeBefore)) {
            // no ties known, or registered before: among the ties already if of their priority
            return headChanged;
        }
        if (ties.isEmpty()) {
            forgetTies();
            return headChanged;
        }
        int priority = element.comparePriorityTo(ties.get(ties.size() - 1).element());
        if (priority > 0 || (priority == 0 && tied.contains(element))) {
            // due after the head, or one of its ties already
            return headChanged;
        }
        if (priority < 0) {
            // the only element of a new, earlier priority
            forgetTies();
            ties = new ArrayList<>(List.of(new Serialized<>(serialized(element), element)));
            tied.add(element);
        } else {
            Serialized<T> added = new Serialized<>(serialized(element), element);
            int at = Collections.binarySearch(ties, added, Serialized.REVERSED);
            if (at < 0) {
                ties.add(-at - 1, added);
                tied.add(element);
            }
        }
        return headChanged;
    }

    @Override
    public boolean remove(T element) {
        boolean headChanged = queue.remove(element);
        if (ties != null
                && !ties.isEmpty()
                && element.comparePriorityTo(ties.get(ties.size() - 1).element()) == 0) {
            int at =
                    Collections.binarySearch(
                            ties,
                            new Serialized<>(serialized(element), element),
                            Serialized.REVERSED);
            if (at >= 0) {
                tied.remove(ties.remove(at).element());
            }
            if (ties.isEmpty()) {
                forgetTies();
            }
        }
        return headChanged;
    }

    @Override
    public void addAll(@Nullable Collection<? extends T> elements) {
        queue.addAll(elements);
        forgetTies();
    }

    @Override
    public boolean isEmpty() {
        return queue.isEmpty();
    }

    @Override
    public int size() {
        return queue.size();
    }

    @Override
    public CloseableIterator<T> iterator() {
        return queue.iterator();
    }

    @Override
    public Set<T> getSubsetForKeyGroup(int keyGroupId) {
        return queue.getSubsetForKeyGroup(keyGroupId);
    }

    /** The elements of the head's priority, found by taking them out and putting them back. */
    private List<Serialized<T>> ties() {
        if (ties != null) {
            return ties;
        }
        List<T> head = new ArrayList<>();
        T first = queue.poll();
        if (first != null) {
            head.add(first);
            T next;
            while ((next = queue.peek()) != null && next.comparePriorityTo(first) == 0) {
                head.add(queue.poll());
            }
            queue.addAll(head);
        }
        ties = new ArrayList<>(head.size());
        for (T element : head) {
            ties.add(new Serialized<>(serialized(element), element));
            tied.add(element);
        }
        ties.sort(Serialized.REVERSED);
        return ties;
    }

    private void forgetTies() {
        ties = null;
        tied.clear();
    }

    private byte[] serialized(T element) {
        out.clear();
        try {
            serializer.serialize(element, out);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot serialize a timer to order it", e);
        }
        return out.getCopyOfBuffer();
    }

    private record Serialized<T>(byte[] bytes, T element) {
        /** Reverse canonical order: the smallest serialized form last. */
        static final Comparator<Serialized<?>> REVERSED =
                (a, b) -> Arrays.compareUnsigned(b.bytes, a.bytes);
    }
}
