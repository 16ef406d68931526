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
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.buffer.FreeingBufferRecycler;
import org.apache.flink.runtime.io.network.buffer.NetworkBuffer;

import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An {@link InFlightLog} that keeps copies of the sent buffers on the heap, within a budget it may
 * share with other logs ({@link InFlightLogMemory}).
 *
 * <p>Once the budget is used up the log {@linkplain #isFull() is full}, and its subpartition holds
 * the producer back until a checkpoint completes and truncation frees memory. The barrier that
 * completes that checkpoint is queued behind data, in the producer's output and in the inputs of
 * the tasks downstream; a log that refused that data would deadlock the job. So a full log still
 * takes buffers while its subpartition lets a pending barrier through, in the budget's
 * <em>overdraft</em> ({@link InFlightLogMemory#overdraft()}: on a TaskManager, as much as its
 * network memory, which bounds what can be queued ahead of a barrier in its outputs and inputs,
 * unless an operator emits more than it reads). Past that it <em>overflows</em>: it drops what it
 * holds and everything until the next epoch starts, and refuses to replay any epoch it no longer
 * has in full. A consumer that needs such an epoch is recovered by a global rollback; data keeps
 * flowing and memory stays bounded. A log whose producer is never held back (a job without
 * checkpoints) overflows the same way.
 */
@Internal
public final class InMemoryInFlightLog implements InFlightLog {

    private final InFlightLogMemory memory;

    @GuardedBy("this")
    private final TreeMap<Long, List<LoggedBuffer>> epochs = new TreeMap<>();

    @GuardedBy("this")
    private long currentEpoch;

    /** Epochs up to and including this one lost buffers to an overflow. */
    @GuardedBy("this")
    private long overflowedThroughEpoch = Long.MIN_VALUE;

    /** Why those epochs were lost. */
    @GuardedBy("this")
    private String lostBecause = "";

    @GuardedBy("this")
    private long sizeInBytes;

    @GuardedBy("this")
    private int numberOfBuffers;

    /** Counts buffers ever dropped from the front, so that cursors can tell truncation apart. */
    @GuardedBy("this")
    private long truncatedBuffers;

    /** A log with a memory budget of its own, and an overdraft of as much again. */
    public InMemoryInFlightLog(long initialEpoch, long capacityBytes) {
        this(initialEpoch, new InFlightLogMemory(capacityBytes, capacityBytes));
    }

    /** A log that takes its memory from {@code memory}, shared with other logs. */
    public InMemoryInFlightLog(long initialEpoch, InFlightLogMemory memory) {
        this.memory = memory;
        this.currentEpoch = initialEpoch;
        epochs.put(initialEpoch, new ArrayList<>());
    }

    @Override
    public synchronized void append(Buffer buffer) {
        if (currentEpoch <= overflowedThroughEpoch) {
            return;
        }
        int size = buffer.readableBytes();
        if (!memory.tryReserveInOverdraft(size)) {
            overflow();
            return;
        }
        byte[] copy = memory.take(size);
        buffer.getNioBufferReadable().get(copy);
        epochs.get(currentEpoch)
                .add(new LoggedBuffer(copy, buffer.getDataType(), buffer.isCompressed()));
        sizeInBytes += size;
        numberOfBuffers++;
    }

    @Override
    public boolean isFull() {
        return memory.isExhausted();
    }

    @Override
    public synchronized void invalidate(String reason) {
        lostBecause = reason;
        drop();
    }

    @GuardedBy("this")
    private void overflow() {
        lostBecause =
                "The in-flight log overflowed the TaskManager's "
                        + memory.capacity()
                        + " bytes of in-flight log memory and its overdraft of "
                        + memory.overdraft()
                        + " bytes in epoch "
                        + currentEpoch
                        + " (clonos.in-flight-log.type: in-memory)";
        drop();
    }

    @GuardedBy("this")
    private void drop() {
        overflowedThroughEpoch = currentEpoch;
        for (List<LoggedBuffer> epoch : epochs.values()) {
            truncatedBuffers += epoch.size();
        }
        release();
    }

    /** Drops every buffer held and gives its memory back. */
    @GuardedBy("this")
    private void release() {
        List<LoggedBuffer> dropped = new ArrayList<>();
        epochs.values().forEach(dropped::addAll);
        epochs.clear();
        epochs.put(currentEpoch, new ArrayList<>());
        memory.release(sizeInBytes);
        dropped.forEach(buffer -> memory.give(buffer.data));
        sizeInBytes = 0;
        numberOfBuffers = 0;
    }

    @Override
    public synchronized void startEpoch(long epoch) {
        if (epoch <= currentEpoch) {
            throw new IllegalStateException(
                    "Epoch " + epoch + " does not follow epoch " + currentEpoch);
        }
        currentEpoch = epoch;
        epochs.put(epoch, new ArrayList<>());
    }

    @Override
    public synchronized void truncateBefore(long epoch) {
        while (!epochs.isEmpty() && epochs.firstKey() < epoch && epochs.firstKey() < currentEpoch) {
            Map.Entry<Long, List<LoggedBuffer>> oldest = epochs.pollFirstEntry();
            for (LoggedBuffer buffer : oldest.getValue()) {
                sizeInBytes -= buffer.data.length;
                memory.release(buffer.data.length);
                memory.give(buffer.data);
            }
            numberOfBuffers -= oldest.getValue().size();
            truncatedBuffers += oldest.getValue().size();
        }
    }

    @Override
    public synchronized Cursor replay() throws InFlightLogUnavailableException {
        checkReplayable();
        return new MemoryCursor(truncatedBuffers);
    }

    @GuardedBy("this")
    private void checkReplayable() throws InFlightLogUnavailableException {
        if (epochs.firstKey() <= overflowedThroughEpoch) {
            throw new InFlightLogUnavailableException(
                    lostBecause + "; it cannot replay from epoch " + epochs.firstKey());
        }
    }

    @Override
    public synchronized long oldestEpoch() {
        return epochs.firstKey();
    }

    @Override
    public synchronized long currentEpoch() {
        return currentEpoch;
    }

    @Override
    public synchronized long sizeInBytes() {
        return sizeInBytes;
    }

    @Override
    public synchronized int numberOfBuffers() {
        return numberOfBuffers;
    }

    @Override
    public synchronized void close() {
        release();
    }

    /** The buffer at an absolute position (counting every buffer ever logged), or null. */
    @Nullable
    private synchronized LoggedBuffer bufferAt(long position)
            throws InFlightLogUnavailableException {
        if (position < truncatedBuffers) {
            throw new InFlightLogUnavailableException(
                    "The in-flight log dropped buffers a replay had not sent yet (truncated or overflowed)");
        }
        long index = position - truncatedBuffers;
        for (List<LoggedBuffer> epoch : epochs.values()) {
            if (index < epoch.size()) {
                return epoch.get((int) index);
            }
            index -= epoch.size();
        }
        return null;
    }

    /**
     * A copy of the buffer at an absolute position, or null; copied under the lock, since a
     * truncated buffer's array goes back to the memory for another log to overwrite.
     */
    @Nullable
    private synchronized Buffer copyAt(long position) throws InFlightLogUnavailableException {
        LoggedBuffer logged = bufferAt(position);
        return logged == null ? null : logged.toNetworkBuffer();
    }

    private synchronized long endPosition() {
        return truncatedBuffers + numberOfBuffers;
    }

    private final class MemoryCursor implements Cursor {

        private long position;

        MemoryCursor(long position) {
            this.position = position;
        }

        @Nullable
        @Override
        public Buffer next() throws InFlightLogUnavailableException {
            Buffer copy = copyAt(position);
            if (copy != null) {
                position++;
            }
            return copy;
        }

        @Override
        public Buffer.DataType peekDataType() {
            try {
                LoggedBuffer logged = bufferAt(position);
                return logged == null ? Buffer.DataType.NONE : logged.dataType;
            } catch (InFlightLogUnavailableException e) {
                // next() reports the loss; until then there is something to fail on
                return Buffer.DataType.DATA_BUFFER;
            }
        }

        @Override
        public int remaining() {
            return (int) Math.max(0, endPosition() - position);
        }
    }

    private static final class LoggedBuffer {
        final byte[] data;
        final Buffer.DataType dataType;
        final boolean compressed;

        LoggedBuffer(byte[] data, Buffer.DataType dataType, boolean compressed) {
            this.data = data;
            this.dataType = dataType;
            this.compressed = compressed;
        }

        Buffer toNetworkBuffer() {
            NetworkBuffer buffer =
                    new NetworkBuffer(
                            MemorySegmentFactory.wrap(data.clone()),
                            FreeingBufferRecycler.INSTANCE,
                            dataType,
                            data.length);
            buffer.setCompressed(compressed);
            return buffer;
        }
    }
}
