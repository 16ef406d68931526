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

import java.util.concurrent.atomic.AtomicLong;

/**
 * The heap budget of a TaskManager's in-flight logs ({@code clonos.in-flight-log.memory}), shared
 * by all of them: a budget per subpartition would let a TaskManager's heap use grow with the number
 * of its tasks' consumers. Logs reserve bytes before they keep a buffer and release them when they
 * drop it. Thread-safe.
 */
@Internal
public final class InFlightLogMemory {

    private final long capacity;
    private final long overdraft;
    private final AtomicLong used = new AtomicLong();

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
