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

package io.clonos.runtime.inflightlog;

import org.apache.flink.annotation.Internal;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The heap budget of a TaskManager's in-flight logs ({@code clonos.in-flight-log.memory}), shared
 * by all of them: a budget per subpartition would let a TaskManager's heap use grow with the number
 * of its tasks' consumers. Logs reserve bytes before they keep a buffer and release them when they
 * drop it. Thread-safe.
 *
 * <p>It also keeps the arrays of dropped buffers for the next ones ({@link #take}, {@link #give}):
 * a busy log copies a full network buffer (a power of two, 32 KB by default) about every buffer its
 * producer sends and drops it a checkpoint later, and with new arrays each of them would be zeroed,
 * outlive several young collections and be copied and promoted by the garbage collector, work that
 * grows with the log's throughput. Kept arrays stay within the budget: the arrays in use and those
 * kept never exceed the capacity and overdraft.
 */
@Internal
public final class InFlightLogMemory {

    private final long capacity;
    private final long overdraft;
    private final AtomicLong used = new AtomicLong();

    /** Arrays kept for reuse, by the power of two of their length. */
    private final ArrayDeque<byte[]>[] kept = newKept();

    /** Bytes of the arrays kept for reuse. */
    private final AtomicLong keptBytes = new AtomicLong();

    /** The smallest array length kept for reuse: smaller buffers are not worth it. */
    static final int LEAST_KEPT = 1024;

    /** A budget without overdraft. */
    public InFlightLogMemory(long capacity) {
        this(capacity, 0);
    }

    /**
     * A budget of {@code capacity} bytes that logs which hold their producers back may exceed by
     * {@code overdraft} bytes, to let a checkpoint's barrier through.
     */
    public InFlightLogMemory(long capacity, long overdraft) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive, was " + capacity);
        }
        if (overdraft < 0) {
            throw new IllegalArgumentException("overdraft must not be negative, was " + overdraft);
        }
        this.capacity = capacity;
        this.overdraft = overdraft;
    }

    /** Reserves {@code bytes} if they fit; false (and nothing reserved) if they do not. */
    public boolean tryReserve(long bytes) {
        return tryReserve(bytes, capacity);
    }

    /** Reserves {@code bytes} if they fit in the capacity and the overdraft. */
    public boolean tryReserveInOverdraft(long bytes) {
        return tryReserve(bytes, capacity + overdraft);
    }

    private boolean tryReserve(long bytes, long limit) {
        while (true) {
            long now = used.get();
            if (now + bytes > limit) {
                return false;
            }
            if (used.compareAndSet(now, now + bytes)) {
                return true;
            }
        }
    }

    public void release(long bytes) {
        used.addAndGet(-bytes);
    }

    /**
     * An array of exactly {@code size} bytes to copy a buffer into, one that a log gave back if
     * there is one. Its content is whatever it held before: the caller overwrites all of it.
     */
    public byte[] take(int size) {
        if (isKeptLength(size)) {
            ArrayDeque<byte[]> arrays = kept[Integer.numberOfTrailingZeros(size)];
            byte[] array;
            synchronized (arrays) {
                array = arrays.pollLast();
            }
            if (array != null) {
                keptBytes.addAndGet(-size);
                return array;
            }
        }
        return new byte[size];
    }

    /**
     * An array a log no longer refers to, its bytes released: kept for {@link #take} if the budget
     * has room for it. Whoever gives an array must not read or write it afterwards.
     */
    public void give(byte[] array) {
        int length = array.length;
        if (!isKeptLength(length) || keptBytes.get() + used.get() + length > capacity + overdraft) {
            return;
        }
        keptBytes.addAndGet(length);
        ArrayDeque<byte[]> arrays = kept[Integer.numberOfTrailingZeros(length)];
        synchronized (arrays) {
            arrays.addLast(array);
        }
    }

    /** Bytes of the arrays kept for reuse (for tests). */
    long keptBytes() {
        return keptBytes.get();
    }

    private static boolean isKeptLength(int length) {
        return length >= LEAST_KEPT && Integer.bitCount(length) == 1;
    }

    @SuppressWarnings("unchecked")
    private static ArrayDeque<byte[]>[] newKept() {
        ArrayDeque<byte[]>[] kept = new ArrayDeque[Integer.SIZE];
        for (int i = 0; i < kept.length; i++) {
            kept[i] = new ArrayDeque<>();
        }
        return kept;
    }

    /** The fraction of the budget not reserved, between 0 and 1. */
    public double freeFraction() {
        return Math.max(0, capacity - used.get()) / (double) capacity;
    }

    /** Whether the reserved bytes reach the capacity: a log that backpressures holds back. */
    public boolean isExhausted() {
        return used.get() >= capacity;
    }

    public long capacity() {
        return capacity;
    }

    public long overdraft() {
        return overdraft;
    }

    public long used() {
        return used.get();
    }
}
