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
package io.clonos.runtime.causal;

import org.apache.flink.annotation.Internal;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * The memory a task's causal logs may take, its own and those it holds for upstream tasks ({@code
 * clonos.determinant.memory}). Bytes are reserved when appended or merged and released when a
 * completed checkpoint truncates them.
 *
 * <p>When the memory is full, the task thread waits (backpressure) as long as a checkpoint the task
 * already took is still pending: its completion truncates every older epoch ({@link
 * #setWaitCondition}). Waiting is safe then: the task has passed that checkpoint's barrier, so the
 * checkpoint does not need the task to go on. When no such checkpoint is pending (the current epoch
 * alone outgrew the memory, a checkpoint was aborted, the task replays or the caller is not the
 * task thread), the log that cannot reserve does not grow: it ends the epoch with an overflow
 * marker ({@link Determinant.Overflow}), so that memory stays bounded and a recovery from that
 * epoch rolls back globally instead of replaying an incomplete log.
 */
@Internal
public final class DeterminantMemory {

    /**
     * How often a waiting task re-checks whether waiting still helps (aborts do not free memory).
     */
    private static final long WAIT_SLICE_MILLIS = 50;

    private final long limitBytes;
    private final AtomicLong used = new AtomicLong();
    private final Object freed = new Object();
    private final AtomicLong waitedNanos = new AtomicLong();
    private volatile BooleanSupplier mayWait = () -> false;

    public DeterminantMemory(long limitBytes) {
        if (limitBytes <= 0) {
            throw new IllegalArgumentException(
                    "clonos.determinant.memory must be positive, was " + limitBytes + " bytes");
        }
        this.limitBytes = limitBytes;
    }

    public static DeterminantMemory unbounded() {
        return new DeterminantMemory(Long.MAX_VALUE);
    }

    /** Reserves {@code bytes} if they fit; false leaves the memory as it was. */
    public boolean tryReserve(long bytes) {
        while (true) {
            long now = used.get();
            if (now + bytes > limitBytes) {
                return false;
            }
            if (used.compareAndSet(now, now + bytes)) {
                return true;
            }
        }
    }

    /**
     * When reserving may wait for a checkpoint to free memory; must not take locks of the logs (it
     * is asked while a thread may be releasing).
     */
    public void setWaitCondition(BooleanSupplier mayWait) {
        this.mayWait = mayWait;
    }

    /** Whether a reservation that does not fit would wait now rather than fail. */
    public boolean mayWait() {
        return mayWait.getAsBoolean();
    }

    /**
     * Reserves {@code bytes}, waiting while they do not fit and {@link #mayWait} holds; false when
     * they do not fit and waiting no longer helps (or the thread is interrupted). Callers must not
     * hold a lock that releasing takes.
     */
    public boolean reserve(long bytes) {
        if (tryReserve(bytes)) {
            return true;
        }
        if (!mayWait()) {
            return false;
        }
        long start = System.nanoTime();
        try {
            synchronized (freed) {
                while (!tryReserve(bytes)) {
                    if (!mayWait()) {
                        return false;
                    }
                    freed.wait(WAIT_SLICE_MILLIS);
                }
                return true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            waitedNanos.addAndGet(System.nanoTime() - start);
        }
    }

    /** Lets waiting threads re-check whether waiting still helps. */
    public void wakeWaiters() {
        synchronized (freed) {
            freed.notifyAll();
        }
    }

    /** How long the task waited for memory in all (for metrics). */
    public long waitedMillis() {
        return TimeUnit.NANOSECONDS.toMillis(waitedNanos.get());
    }

    /** Reserves {@code bytes} whether they fit or not (an overflow marker's byte). */
    void forceReserve(long bytes) {
        used.addAndGet(bytes);
    }

    public void release(long bytes) {
        if (bytes == 0) {
            return;
        }
        used.addAndGet(-bytes);
        synchronized (freed) {
            freed.notifyAll();
        }
    }

    public long usedBytes() {
        return used.get();
    }

    public long limitBytes() {
        return limitBytes;
    }
}
