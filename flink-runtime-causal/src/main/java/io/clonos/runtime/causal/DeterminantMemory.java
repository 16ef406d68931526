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

import java.util.concurrent.atomic.AtomicLong;

/**
 * The memory a task's causal logs may take, its own and those it holds for upstream tasks
 * ({@code clonos.determinant.memory}). Bytes are reserved when appended or merged and released
 * when a completed checkpoint truncates them. A log that cannot reserve does not grow: it ends the
 * epoch with an overflow marker ({@link Determinant.Overflow}), so that memory stays bounded and a
 * recovery from that epoch rolls back globally instead of replaying an incomplete log.
 */
@Internal
public final class DeterminantMemory {

    private final long limitBytes;
    private final AtomicLong used = new AtomicLong();

    public DeterminantMemory(long limitBytes) {
        if (limitBytes <= 0) {
            throw new IllegalArgumentException("clonos.determinant.memory must be positive, was " + limitBytes + " bytes");
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

    /** Reserves {@code bytes} whether they fit or not (an overflow marker's byte). */
    void forceReserve(long bytes) {
        used.addAndGet(bytes);
    }

    public void release(long bytes) {
        used.addAndGet(-bytes);
    }

    public long usedBytes() {
        return used.get();
    }

    public long limitBytes() {
        return limitBytes;
    }
}
