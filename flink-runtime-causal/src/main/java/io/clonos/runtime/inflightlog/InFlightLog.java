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
import org.apache.flink.runtime.io.network.buffer.Buffer;

import javax.annotation.Nullable;

/**
 * The buffers one output subpartition sent since the last completed checkpoint, segmented by epoch,
 * so that a consumer that recovers from checkpoint {@code c} can be fed again everything after
 * barrier {@code c}. Storage is behind this interface so that in-memory and spilling logs are
 * interchangeable.
 *
 * <p>Epoch {@code e} holds what was sent after barrier {@code e} up to and including barrier {@code
 * e+1}'s buffer. What was sent before the first barrier the log sees is held in the epoch the log
 * was created with.
 *
 * <p>Implementations are thread-safe: the producer's sending thread appends while a reconnected
 * consumer's replay reads, and checkpoint completion truncates from yet another thread.
 */
@Internal
public interface InFlightLog extends AutoCloseable {

    /**
     * Logs a copy of a buffer that is being sent in the current epoch; the caller keeps ownership
     * of {@code buffer}.
     */
    void append(Buffer buffer);

    /** Starts epoch {@code epoch}: what is appended from now on belongs to it. */
    void startEpoch(long epoch);

    /** Drops every epoch before {@code epoch}: checkpoint {@code epoch} has completed. */
    void truncateBefore(long epoch);

    /**
     * A cursor that replays, in order, everything still in the log from its oldest epoch on,
     * including what is appended while it replays.
     *
     * @throws InFlightLogUnavailableException if the log lost part of that range (it overflowed)
     */
    Cursor replay() throws InFlightLogUnavailableException;

    /** The oldest epoch the log can replay from. */
    long oldestEpoch();

    /** The epoch buffers are appended to. */
    long currentEpoch();

    /** The bytes the log holds, in memory and on disk. */
    long sizeInBytes();

    int numberOfBuffers();

    /**
     * Whether the log's memory is used up and its producer should be held back until a checkpoint
     * completes and frees it; only a log that cannot spill ({@code in-memory}) ever is. A full log
     * still takes what it is given, within an overdraft (see {@link InMemoryInFlightLog}), so that
     * whoever holds the producer back can let a checkpoint's barrier through.
     */
    default boolean isFull() {
        return false;
    }

    /** The bytes the log holds on disk. */
    default long bytesOnDisk() {
        return 0;
    }

    /** The bytes ever written to disk by this log. */
    default long spilledBytes() {
        return 0;
    }

    /** The bytes ever read back from disk by this log's replays. */
    default long readBytes() {
        return 0;
    }

    /**
     * Part of what was to be logged is lost ({@code reason}: a buffer the log never got, a failed
     * write): the log refuses to replay the epochs up to the current one, so a consumer that needs
     * them is recovered by a global rollback instead of being fed a stream with a hole.
     */
    void invalidate(String reason);

    @Override
    void close();

    /** A position in the log; not thread-safe, used by one reader. */
    interface Cursor {

        /**
         * The next logged buffer as a fresh network buffer the caller owns, or null if caught up.
         */
        @Nullable
        Buffer next() throws InFlightLogUnavailableException;

        /** The type of the buffer {@link #next()} would return, {@code NONE} if caught up. */
        Buffer.DataType peekDataType();

        /** How many logged buffers this cursor has not returned yet. */
        int remaining();
    }
}
