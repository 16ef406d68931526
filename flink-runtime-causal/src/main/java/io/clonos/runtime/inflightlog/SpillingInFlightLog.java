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

import io.clonos.runtime.configuration.ClonosOptions.SpillPolicy;

import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.buffer.FreeingBufferRecycler;
import org.apache.flink.runtime.io.network.buffer.NetworkBuffer;
import org.apache.flink.util.FileUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * An {@link InFlightLog} that keeps what fits in the TaskManager's log memory on the heap and
 * writes the rest, by its {@link SpillPolicy}, to one file per epoch: the log is never full, so a
 * long epoch, backpressure or a slow recovery does not cost the next failure its local recovery.
 *
 * <p>In each epoch the buffers on disk precede those in memory (a spill writes an epoch's buffers
 * in memory, in order, after those already written), so a run of spilled buffers is one region of
 * the epoch's file and a replay reads up to {@code prefetchBuffers} of them at once.
 *
 * <p>Each spilled buffer's CRC32C is checked when it is read back. A write or read that fails (or a
 * checksum that does not match) loses data the log was to hold: the log drops its epochs up to the
 * current one and refuses to replay them, naming the failure ({@link #invalidate}). A consumer that
 * needs them is then recovered by a global rollback, never fed a stream with a hole.
 */
@Internal
public final class SpillingInFlightLog implements InFlightLog {

    private static final Logger LOG = LoggerFactory.getLogger(SpillingInFlightLog.class);

    private final String name;
    private final InFlightLogMemory memory;
    private final SpillPolicy policy;
    private final double spillTrigger;
    private final int prefetchBuffers;
    private final Path directory;

    @GuardedBy("this")
    private final TreeMap<Long, Epoch> epochs = new TreeMap<>();

    @GuardedBy("this")
    private long currentEpoch;

    /** Epochs up to and including this one lost buffers. */
    @GuardedBy("this")
    private long lostThroughEpoch = Long.MIN_VALUE;

    @GuardedBy("this")
    private String lostBecause = "";

    @GuardedBy("this")
    private long bytesInMemory;

    @GuardedBy("this")
    private long bytesOnDisk;

    @GuardedBy("this")
    private int numberOfBuffers;

    /** Counts buffers ever dropped from the front, so that cursors can tell truncation apart. */
    @GuardedBy("this")
    private long truncatedBuffers;

    @GuardedBy("this")
    private long spilledBytes;

    @GuardedBy("this")
    private long readBytes;

    @GuardedBy("this")
    private boolean closed;

    public SpillingInFlightLog(
            String name,
            long initialEpoch,
            InFlightLogMemory memory,
            SpillPolicy policy,
            double spillTrigger,
            int prefetchBuffers,
            Path directory) {
        this.name = name;
        this.memory = memory;
        this.policy = policy;
        this.spillTrigger = spillTrigger;
        this.prefetchBuffers = prefetchBuffers;
        this.directory = directory;
        this.currentEpoch = initialEpoch;
        epochs.put(initialEpoch, new Epoch(initialEpoch));
    }

    @Override
    public synchronized void append(Buffer buffer) {
        if (closed || currentEpoch <= lostThroughEpoch) {
            return;
        }
        Epoch epoch = epochs.get(currentEpoch);
        int size = buffer.readableBytes();
        try {
            if (policy == SpillPolicy.EAGER) {
                epoch.write(buffer);
                return;
            }
            boolean fits = memory.tryReserve(size);
            if (!fits) {
                // the memory is used up: what this log holds goes to disk, and the buffer too
                // if other logs hold the rest
                spillAll();
                fits = memory.tryReserve(size);
            }
            if (!fits) {
                epoch.write(buffer);
                return;
            }
            epoch.keep(buffer, size);
            if (policy == SpillPolicy.AVAILABILITY && memory.freeFraction() < spillTrigger) {
                spillAll();
            }
        } catch (IOException e) {
            lose("writing to " + epoch.file.path() + " failed: " + e, e);
        }
    }

    @Override
    public synchronized void startEpoch(long epoch) {
        if (epoch <= currentEpoch) {
            throw new IllegalStateException(
                    "Epoch " + epoch + " does not follow epoch " + currentEpoch);
        }
        long previous = currentEpoch;
        currentEpoch = epoch;
        epochs.put(epoch, new Epoch(epoch));
        if (policy == SpillPolicy.EPOCH && !closed) {
            Epoch ended = epochs.get(previous);
            if (ended != null) {
                try {
                    ended.spill();
                } catch (IOException e) {
                    lose(
                            "writing epoch "
                                    + previous
                                    + " to "
                                    + ended.file.path()
                                    + " failed: "
                                    + e,
                            e);
                }
            }
        }
    }

    @Override
    public synchronized void truncateBefore(long epoch) {
        while (!epochs.isEmpty() && epochs.firstKey() < epoch && epochs.firstKey() < currentEpoch) {
            Epoch oldest = epochs.pollFirstEntry().getValue();
            numberOfBuffers -= oldest.entries.size();
            truncatedBuffers += oldest.entries.size();
            oldest.delete();
        }
    }

    @Override
    public synchronized Cursor replay() throws InFlightLogUnavailableException {
        if (epochs.firstKey() <= lostThroughEpoch) {
            throw new InFlightLogUnavailableException(
                    lostBecause + "; it cannot replay from epoch " + epochs.firstKey());
        }
        return new SpillingCursor(truncatedBuffers);
    }

    @Override
    public synchronized void invalidate(String reason) {
        lose(reason, null);
    }

    @GuardedBy("this")
    private void lose(String reason, @Nullable Throwable cause) {
        LOG.error(
                "{}: the in-flight log lost data ({}); it will not replay epochs up to {}, and a consumer that needs them is recovered by a global rollback.",
                name,
                reason,
                currentEpoch,
                cause);
        lostBecause = "The in-flight log of " + name + " lost data: " + reason;
        lostThroughEpoch = currentEpoch;
        for (Epoch epoch : epochs.values()) {
            truncatedBuffers += epoch.entries.size();
            epoch.delete();
        }
        epochs.clear();
        epochs.put(currentEpoch, new Epoch(currentEpoch));
        numberOfBuffers = 0;
    }

    /** Writes every buffer this log holds in memory to disk. */
    @GuardedBy("this")
    private void spillAll() throws IOException {
        for (Epoch epoch : epochs.values()) {
            epoch.spill();
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
        return bytesInMemory + bytesOnDisk;
    }

    @Override
    public synchronized int numberOfBuffers() {
        return numberOfBuffers;
    }

    @Override
    public synchronized long bytesOnDisk() {
        return bytesOnDisk;
    }

    @Override
    public synchronized long spilledBytes() {
        return spilledBytes;
    }

    @Override
    public synchronized long readBytes() {
        return readBytes;
    }

    /** Deletes the log's files and releases its memory. */
    @Override
    public synchronized void close() {
        closed = true;
        for (Epoch epoch : epochs.values()) {
            epoch.delete();
        }
        epochs.clear();
        epochs.put(currentEpoch, new Epoch(currentEpoch));
        numberOfBuffers = 0;
        FileUtils.deleteDirectoryQuietly(directory.toFile());
    }

    /** The entry at an absolute position (counting every buffer ever logged), or null. */
    @GuardedBy("this")
    @Nullable
    private Located locate(long position) throws InFlightLogUnavailableException {
        if (position < truncatedBuffers) {
            throw new InFlightLogUnavailableException(
                    "The in-flight log of "
                            + name
                            + " dropped buffers a replay had not sent yet (truncated or lost)");
        }
        long index = position - truncatedBuffers;
        for (Epoch epoch : epochs.values()) {
            if (index < epoch.entries.size()) {
                return new Located(epoch, (int) index);
            }
            index -= epoch.entries.size();
        }
        return null;
    }

    /**
     * The buffers from {@code position} on: one from memory, or up to {@code prefetchBuffers}
     * consecutive ones from disk in one read. Empty if the replay caught up.
     */
    private synchronized List<Buffer> readFrom(long position)
            throws InFlightLogUnavailableException {
        Located located = locate(position);
        List<Buffer> read = new ArrayList<>();
        if (located == null) {
            return read;
        }
        Epoch epoch = located.epoch;
        Entry first = epoch.entries.get(located.index);
        if (first.data != null) {
            // a copy, under the lock: the array goes back to the memory once the entry is dropped
            read.add(first.toNetworkBuffer(first.data.clone()));
            return read;
        }
        int end = located.index;
        long bytes = 0;
        while (end < epoch.entries.size()
                && end - located.index < prefetchBuffers
                && epoch.entries.get(end).data == null) {
            bytes += epoch.entries.get(end).length;
            end++;
        }
        try {
            ByteBuffer region = epoch.file.read(first.offset, (int) bytes);
            readBytes += bytes;
            for (int i = located.index; i < end; i++) {
                Entry entry = epoch.entries.get(i);
                byte[] data = new byte[entry.length];
                region.get(data);
                if (checksum(ByteBuffer.wrap(data)) != entry.checksum) {
                    throw new IOException(
                            "buffer "
                                    + (i + 1)
                                    + " of the epoch (bytes "
                                    + entry.offset
                                    + " to "
                                    + (entry.offset + entry.length)
                                    + ") does not match its checksum");
                }
                read.add(entry.toNetworkBuffer(data));
            }
            return read;
        } catch (IOException e) {
            for (Buffer buffer : read) {
                buffer.recycleBuffer();
            }
            String reason =
                    "reading epoch " + epoch.id + " from " + epoch.file.path() + " failed: " + e;
            lose(reason, e);
            throw new InFlightLogUnavailableException(lostBecause);
        }
    }

    @Nullable
    private synchronized Buffer.DataType typeAt(long position)
            throws InFlightLogUnavailableException {
        Located located = locate(position);
        return located == null ? null : located.epoch.entries.get(located.index).type;
    }

    private synchronized long endPosition() {
        return truncatedBuffers + numberOfBuffers;
    }

    private synchronized void checkNotTruncated(long position)
            throws InFlightLogUnavailableException {
        locate(position);
    }

    /**
     * Spilled bytes are checked when read back: a damaged file fails the replay, never feeds it.
     */
    private static int checksum(ByteBuffer bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        return (int) crc.getValue();
    }

    private record Located(Epoch epoch, int index) {}

    /** One epoch: its buffers, in order, those on disk ahead of those in memory. */
    private final class Epoch {
        final long id;
        final List<Entry> entries = new ArrayList<>();
        final EpochFile file;

        /** Entries before this index are on disk. */
        int firstInMemory;

        Epoch(long id) {
            this.id = id;
            this.file = new EpochFile(directory.resolve("epoch-" + id + ".log"));
        }

        void keep(Buffer buffer, int size) {
            byte[] copy = memory.take(size);
            buffer.getNioBufferReadable().get(copy);
            entries.add(new Entry(buffer.getDataType(), buffer.isCompressed(), size, copy));
            bytesInMemory += size;
            numberOfBuffers++;
        }

        /** Writes a buffer straight to disk, behind everything the epoch holds in memory. */
        void write(Buffer buffer) throws IOException {
            spill();
            int size = buffer.readableBytes();
            ByteBuffer bytes = buffer.getNioBufferReadable();
            int checksum = checksum(bytes.duplicate());
            long offset = append(bytes);
            Entry entry = new Entry(buffer.getDataType(), buffer.isCompressed(), size, null);
            entry.offset = offset;
            entry.checksum = checksum;
            entries.add(entry);
            firstInMemory = entries.size();
            bytesOnDisk += size;
            numberOfBuffers++;
        }

        /** Writes the epoch's buffers in memory to disk, in order. */
        void spill() throws IOException {
            for (int i = firstInMemory; i < entries.size(); i++) {
                Entry entry = entries.get(i);
                entry.checksum = checksum(ByteBuffer.wrap(entry.data));
                entry.offset = append(ByteBuffer.wrap(entry.data));
                byte[] written = entry.data;
                entry.data = null;
                bytesInMemory -= entry.length;
                bytesOnDisk += entry.length;
                memory.release(entry.length);
                memory.give(written);
            }
            firstInMemory = entries.size();
        }

        private long append(ByteBuffer data) throws IOException {
            int length = data.remaining();
            long offset = file.append(data);
            spilledBytes += length;
            return offset;
        }

        /** Drops the epoch: its memory is released, its file deleted. */
        void delete() {
            for (int i = firstInMemory; i < entries.size(); i++) {
                Entry entry = entries.get(i);
                bytesInMemory -= entry.length;
                memory.release(entry.length);
                memory.give(entry.data);
                entry.data = null;
            }
            for (int i = 0; i < firstInMemory; i++) {
                bytesOnDisk -= entries.get(i).length;
            }
            firstInMemory = entries.size();
            file.delete(name);
        }
    }

    private static final class Entry {
        final Buffer.DataType type;
        final boolean compressed;
        final int length;

        /** The bytes while in memory; null once on disk. */
        @Nullable byte[] data;

        long offset = -1;

        /** CRC32C of the bytes on disk. */
        int checksum;

        Entry(Buffer.DataType type, boolean compressed, int length, @Nullable byte[] data) {
            this.type = type;
            this.compressed = compressed;
            this.length = length;
            this.data = data;
        }

        Buffer toNetworkBuffer(byte[] bytes) {
            NetworkBuffer buffer =
                    new NetworkBuffer(
                            MemorySegmentFactory.wrap(bytes),
                            FreeingBufferRecycler.INSTANCE,
                            type,
                            length);
            buffer.setCompressed(compressed);
            return buffer;
        }
    }

    private final class SpillingCursor implements Cursor {

        private long position;
        private final ArrayDeque<Buffer> readAhead = new ArrayDeque<>();

        SpillingCursor(long position) {
            this.position = position;
        }

        @Nullable
        @Override
        public Buffer next() throws InFlightLogUnavailableException {
            if (readAhead.isEmpty()) {
                readAhead.addAll(readFrom(position));
                if (readAhead.isEmpty()) {
                    return null;
                }
            } else {
                try {
                    // what was read ahead must not outlive its truncation
                    checkNotTruncated(position);
                } catch (InFlightLogUnavailableException e) {
                    readAhead.forEach(Buffer::recycleBuffer);
                    readAhead.clear();
                    throw e;
                }
            }
            position++;
            return readAhead.poll();
        }

        @Override
        public Buffer.DataType peekDataType() {
            if (!readAhead.isEmpty()) {
                return readAhead.peek().getDataType();
            }
            try {
                Buffer.DataType type = typeAt(position);
                return type == null ? Buffer.DataType.NONE : type;
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

    @Override
    public String toString() {
        return name;
    }
}
