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

import javax.annotation.concurrent.GuardedBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The causal log of a task's main thread: the determinants of everything nondeterministic the task
 * did, in the order it did it, segmented by epoch. The task thread appends; the network threads
 * read the tail that each consumer connection has not been sent yet, to piggyback it on the next
 * buffer ({@link Position}).
 */
@Internal
public final class TaskCausalLog {

    private static final org.slf4j.Logger LOG =
            org.slf4j.LoggerFactory.getLogger(TaskCausalLog.class);

    private final CausalLogId id;

    @GuardedBy("this")
    private final TreeMap<Long, LogSegment> epochs = new TreeMap<>();

    /** Written under the lock; read without it by the task thread's appends. */
    private volatile long currentEpoch;

    @GuardedBy("this")
    private long totalBytes;

    /** {@link #totalBytes} per kind of determinant ({@link DeterminantEncoding#KINDS}). */
    @GuardedBy("this")
    private final long[] bytesByKind = new long[DeterminantEncoding.KINDS.size()];

    /** Bytes of the epochs kept (not truncated yet), reserved in {@link #memory}. */
    @GuardedBy("this")
    private long retainedBytes;

    private final DeterminantMemory memory;

    /**
     * The epoch whose log ran out of memory and ends in an {@link Determinant.Overflow}. Written
     * under the lock; read without it by the task thread's appends.
     */
    private volatile long overflowedEpoch = Long.MIN_VALUE;

    /** Encoding buffer, used by the task thread only. */
    private final EncodingBuffer scratch = new EncodingBuffer();

    /** Encoding buffer of the open run, used under the lock by whichever thread writes it. */
    @GuardedBy("this")
    private final EncodingBuffer scratchRun = new EncodingBuffer();

    /** The current epoch's encoder (task thread only; replaced when an epoch starts). */
    private DeterminantEncoding.Encoder encoder = new DeterminantEncoding.Encoder();

    /**
     * Determinants of the current epoch's open run, not written yet ({@link #appendFresh}); written
     * by the next append, the next epoch, or the next reader, whichever comes first.
     */
    @GuardedBy("this")
    private int openRun;

    /** Whether the open run is of split records rather than ticks. */
    @GuardedBy("this")
    private boolean openRunOfSplits;

    public TaskCausalLog(CausalLogId id, long firstEpoch) {
        this(id, firstEpoch, DeterminantMemory.unbounded());
    }

    /**
     * A log that keeps what fits in {@code memory} until checkpoints truncate it; past that, an
     * epoch's log ends in an {@link Determinant.Overflow} and the task cannot be recovered by
     * determinants from that epoch.
     */
    public TaskCausalLog(CausalLogId id, long firstEpoch, DeterminantMemory memory) {
        this.id = id;
        this.currentEpoch = firstEpoch;
        this.memory = memory;
        epochs.put(firstEpoch, new LogSegment());
    }

    public CausalLogId id() {
        return id;
    }

    /** The memory this log shares with the logs its task holds. */
    public DeterminantMemory memory() {
        return memory;
    }

    /**
     * Records one determinant in the current epoch. Task thread only: it encodes into a buffer of
     * its own and appends from it under one lock, since this runs for about every record.
     */
    public void append(Determinant determinant) {
        scratch.reset();
        encoder.encode(determinant, scratch);
        appendScratch(scratch.size());
    }

    /**
     * Records two determinants that only mean something together (where an async result took
     * effect, and the result) under one lock, so that a reader takes both or neither: a consumer
     * whose copy ended between them would hand a recovering task a point without its result.
     */
    public void append(Determinant first, Determinant second) {
        scratch.reset();
        encoder.encode(first, scratch);
        int firstLength = scratch.size();
        encoder.encode(second, scratch);
        appendScratch(firstLength);
    }

    /** Appends what {@link #scratch} holds: one encoded determinant, or two if it is longer. */
    private void appendScratch(int firstLength) {
        int length = scratch.size();
        if (overflowedEpoch == currentEpoch) {
            return;
        }
        // outside the lock: waiting for memory waits for a truncation, which takes it
        boolean fits = memory.reserve(length);
        synchronized (this) {
            closeRun();
            if (fits) {
                write(scratch.array(), 0, firstLength);
                if (firstLength < length) {
                    write(scratch.array(), firstLength, length - firstLength);
                }
            } else {
                overflowedEpoch = currentEpoch;
                byte[] marker = DeterminantEncoding.overflowMarker();
                memory.forceReserve(marker.length);
                write(marker, 0, marker.length);
                LOG.warn(
                        "The causal logs of {} hold {} bytes and reached clonos.determinant.memory ({} bytes): the task cannot be "
                                + "recovered by determinants from epoch {} (a failure rolls the job back globally); checkpoints free the memory.",
                        id,
                        memory.usedBytes(),
                        memory.limitBytes(),
                        currentEpoch);
            }
        }
    }

    /**
     * Records a choice the task made now (task thread only), not one it replays. A choice that
     * follows from the one before, as a busy task's do (a tick at the next element in the same
     * millisecond, a record of the previous record's split), only extends the open run of its kind:
     * the run is written as one determinant when anything else is appended, when the epoch ends, or
     * when a reader asks for the log, so it is in the log before any output of its elements leaves
     * the task (outputs leave with what the log's readers took). Where a run ends thus depends on
     * when readers came; a recovered task does not re-create its predecessor's runs, it logs them
     * as they were ({@link #append}).
     */
    public void appendFresh(Determinant determinant) {
        if (!encoder.extendsRun(determinant)) {
            append(determinant);
            return;
        }
        encoder.takeIntoRun(determinant);
        boolean ofSplits = determinant instanceof Determinant.SourceSplit;
        synchronized (this) {
            if (openRun > 0 && openRunOfSplits != ofSplits) {
                closeRun();
            }
            openRunOfSplits = ofSplits;
            openRun++;
        }
    }

    /** Writes the open run, if any (a few bytes, reserved without waiting). */
    @GuardedBy("this")
    private void closeRun() {
        if (openRun == 0) {
            return;
        }
        int count = openRun;
        openRun = 0;
        if (overflowedEpoch == currentEpoch) {
            return;
        }
        scratchRun.reset();
        DeterminantEncoding.writeRun(openRunOfSplits, count, scratchRun);
        memory.forceReserve(scratchRun.size());
        write(scratchRun.array(), 0, scratchRun.size());
    }

    /** Appends one encoded determinant. */
    @GuardedBy("this")
    private void write(byte[] bytes, int offset, int length) {
        epochs.get(currentEpoch).append(bytes, offset, length);
        bytesByKind[DeterminantEncoding.kindOf(bytes[offset])] += length;
        totalBytes += length;
        retainedBytes += length;
    }

    /** The task took checkpoint {@code epoch}: what it does from now on belongs to that epoch. */
    public synchronized void startEpoch(long epoch) {
        if (epoch > currentEpoch) {
            closeRun();
            currentEpoch = epoch;
            encoder = new DeterminantEncoding.Encoder();
            epochs.putIfAbsent(epoch, new LogSegment());
        }
    }

    /** Checkpoint {@code epoch} completed: no recovery will start before it. */
    public synchronized void truncateBefore(long epoch) {
        Map<Long, LogSegment> truncated = epochs.headMap(Math.min(epoch, currentEpoch), false);
        long freed = 0;
        for (LogSegment segment : truncated.values()) {
            freed += segment.size();
        }
        truncated.clear();
        retainedBytes -= freed;
        memory.release(freed);
    }

    /** Bytes of the epochs kept (for metrics). */
    public synchronized long retainedBytes() {
        return retainedBytes;
    }

    public synchronized long currentEpoch() {
        return currentEpoch;
    }

    /** Bytes appended since the task started, truncated ones included (for metrics). */
    public synchronized long totalBytes() {
        return totalBytes;
    }

    /**
     * Bytes appended since the task started of one kind of determinant ({@link
     * DeterminantEncoding#KINDS}), truncated ones included (for metrics).
     */
    public synchronized long totalBytes(String kind) {
        int index = DeterminantEncoding.KINDS.indexOf(kind);
        if (index < 0) {
            throw new IllegalArgumentException(
                    "No determinant kind " + kind + "; the kinds are " + DeterminantEncoding.KINDS);
        }
        return bytesByKind[index];
    }

    /**
     * What one reader has not been given yet, as one delta per epoch with new bytes; advances the
     * reader's position. A reader whose epoch was truncated starts over at the oldest epoch kept.
     */
    public synchronized List<CausalLogDelta> deltasSince(Position position) {
        closeRun();
        List<CausalLogDelta> deltas = null;
        if (position.epoch < epochs.firstKey()) {
            position.epoch = epochs.firstKey();
            position.offset = 0;
        }
        for (Map.Entry<Long, LogSegment> e : epochs.tailMap(position.epoch, true).entrySet()) {
            long from = e.getKey() == position.epoch ? position.offset : 0;
            LogSegment segment = e.getValue();
            if (segment.size() > from) {
                if (deltas == null) {
                    deltas = new ArrayList<>(1);
                }
                deltas.add(new CausalLogDelta(id, e.getKey(), from, segment.copy((int) from)));
            }
            position.epoch = e.getKey();
            position.offset = segment.size();
        }
        return deltas == null ? List.of() : deltas;
    }

    /** Whether {@link #deltasSince} would return anything for this position. */
    public synchronized boolean hasNewSince(Position position) {
        if (openRun > 0) {
            return true;
        }
        if (position.epoch < epochs.firstKey()) {
            return epochs.values().stream().anyMatch(s -> s.size() > 0);
        }
        LogSegment last = epochs.lastEntry().getValue();
        return epochs.lastKey() > position.epoch ? true : last.size() > position.offset;
    }

    /** How far a reader (a consumer connection) has been given the log. */
    public static final class Position {
        private long epoch = -1;
        private long offset;
    }
}
