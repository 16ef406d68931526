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

package io.clonos.runtime.network;

import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.DownstreamCopy;
import io.clonos.runtime.causal.LocalRecoveryImpossibleException;
import io.clonos.runtime.causal.SharedDelta;
import io.clonos.runtime.inflightlog.InFlightLog;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.api.EventAnnouncement;
import org.apache.flink.runtime.io.network.api.serialization.EventSerializer;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.partition.BufferAvailabilityListener;
import org.apache.flink.runtime.io.network.partition.ResultSubpartition.BufferAndBacklog;
import org.apache.flink.runtime.io.network.partition.ResultSubpartitionView;
import org.apache.flink.runtime.io.network.partition.consumer.LocalInputChannel;

import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;

import java.io.IOException;
import java.util.List;
import java.util.TreeMap;

/**
 * What one consumer connection reads from a {@link LoggingSubpartition}: a {@link
 * ReplayStartEvent}, the in-flight log, then live data. Sequence numbers start at zero for every
 * connection, as the consumer's new input channel expects.
 *
 * <p>Flink's subpartition stops after an aligned checkpoint barrier until the consumer resumes it;
 * this view does the same for every blocking barrier it sends, replayed or live, so a consumer
 * never receives data from behind a barrier it is still aligning.
 *
 * <p>With causal logging, every data buffer and event is preceded by a {@link CausalLogDeltaEvent}
 * when the producer's causal log grew since the last one, so the consumer holds the determinants of
 * everything it received. A producer recovered with determinants skips the data the consumer
 * already has ({@link #continueAfter}).
 */
@Internal
final class ReplayingSubpartitionView implements ResultSubpartitionView {

    private final LoggingSubpartition subpartition;
    private final BufferAvailabilityListener consumer;
    private final long startEpoch;
    private final SubpartitionLogMetrics metrics;

    /** Null once the replay has caught up with the live data. */
    @Nullable private InFlightLog.Cursor replay;

    private boolean startEventSent;

    /**
     * How far this connection has been given the producer's causal log and the logs it holds; a
     * consumer in the producer's TaskManager reads through a local channel.
     */
    private final DownstreamCopy downstream;

    /** A data buffer waiting behind the causal log delta sent before it. */
    @Nullable private Buffer held;

    /** Announces a stream that continues the consumer's previous one; sent before any data. */
    @Nullable private ContinuedStreamEvent continued;

    /** Whether the consumer was told if the stream continues its previous one or starts afresh. */
    private boolean streamAnnounced;

    /** What the consumer received from the producer's predecessor; null when nothing is skipped. */
    /** Volatile: the task thread asks whether it is still under way, without the view's lock. */
    @Nullable private volatile Deduplication deduplication;

    /**
     * The consumer recovered too and still replays what its predecessor read of this stream.
     * Volatile: the task thread asks, without the view's lock.
     */
    private volatile boolean consumerReplays;

    /** The recovery diverged: nothing more is sent. */
    private boolean diverged;

    /**
     * The log this view reads misses what the producer sent: the consumer fails on it instead of
     * reading a stream with a hole. Volatile: set by the producer's thread.
     */
    @Nullable private volatile IOException failure;

    private boolean blocked;
    private int sequenceNumber;

    /** The highest checkpoint whose barrier is to be announced, and the last one announced. */
    private volatile long announcement = Long.MIN_VALUE;

    @GuardedBy("this")
    private long announced = Long.MIN_VALUE;

    private volatile boolean released;
    private volatile boolean detached;

    ReplayingSubpartitionView(
            LoggingSubpartition subpartition,
            BufferAvailabilityListener consumer,
            InFlightLog.Cursor replay,
            long startEpoch,
            SubpartitionLogMetrics metrics) {
        this.subpartition = subpartition;
        this.consumer = consumer;
        this.downstream = new DownstreamCopy(!(consumer instanceof LocalInputChannel));
        this.replay = replay;
        this.startEpoch = startEpoch;
        this.metrics = metrics;
    }

    /**
     * Announces checkpoint {@code checkpointId}'s barrier to the consumer ahead of the data queued
     * before it, as an event, which needs no credit ({@link LogBackpressure}); any thread.
     *
     * @return whether the consumer is to be told that there is something to read
     */
    boolean announce(long checkpointId) {
        if (checkpointId <= announcement) {
            return false;
        }
        announcement = checkpointId;
        return true;
    }

    /** Whether an announcement is to go out before anything else. */
    @GuardedBy("this")
    private boolean announces() {
        return announcement > announced && held == null;
    }

    @Nullable
    @Override
    public synchronized BufferAndBacklog getNextBuffer() throws IOException {
        if (failure != null) {
            throw failure;
        }
        if (released || detached || blocked || diverged) {
            return null;
        }
        if (!startEventSent) {
            startEventSent = true;
            return next(EventSerializer.toBuffer(new ReplayStartEvent(startEpoch), false));
        }
        if (announces()) {
            announced = announcement;
            CheckpointBarrier barrier =
                    new CheckpointBarrier(
                            announced, 0, CheckpointOptions.forCheckpointWithDefaultLocation());
            return next(EventSerializer.toBuffer(new EventAnnouncement(barrier, 0), false));
        }
        if (continued != null) {
            ContinuedStreamEvent event = continued;
            continued = null;
            streamAnnounced = true;
            return next(EventSerializer.toBuffer(event, false));
        }
        Buffer buffer = held;
        held = null;
        if (buffer == null) {
            buffer = pollData();
            if (buffer == null) {
                return null;
            }
        }
        CausalTask task = subpartition.causalTask();
        if (buffer.isBuffer() && !streamAnnounced) {
            // the producer does not continue a predecessor's stream (it would have said so
            // before producing anything): the consumer drops what it holds of the old stream,
            // logs included, so this goes before any log
            streamAnnounced = true;
            if (task != null) {
                held = buffer;
                // a producer that replays by determinants regenerates its predecessor's stream
                // (this consumer connected after the others answered: it has nothing of it)
                long announced =
                        task.recovery().replaysDeterminants() ? 0 : ContinuedStreamEvent.FRESH;
                return next(EventSerializer.toBuffer(new ContinuedStreamEvent(announced), false));
            }
        }
        if (task != null && (buffer.isBuffer() || streamAnnounced)) {
            // Before an event as before data: the determinant behind a barrier (a source's place
            // for it, a task's read of the last barrier of its alignment) must reach the consumer
            // with the barrier, since no data follows an aligned barrier until the consumer
            // resumes. A producer lost during that alignment would otherwise leave a barrier
            // downstream that no log explains, and its replacement would put it elsewhere. (An
            // event before the stream's announcement goes alone, as the log would be dropped.)
            List<SharedDelta> deltas = downstream.next(task);
            if (!deltas.isEmpty()) {
                held = buffer;
                return next(EventSerializer.toBuffer(new CausalLogDeltaEvent(deltas), false));
            }
        }
        return next(buffer);
    }

    /** The next buffer of the replay or of the live data, without what is to be skipped. */
    @Nullable
    private Buffer pollData() throws IOException {
        while (true) {
            Buffer buffer = null;
            if (replay != null) {
                buffer = replay.next();
                if (buffer != null) {
                    metrics.replayed();
                    subpartition.readFromLog(this, buffer.readableBytes());
                } else if (subpartition.replayCaughtUp(this, replay)) {
                    replay = null;
                } else {
                    // the producer moved more live data into the log meanwhile
                    continue;
                }
            }
            if (buffer == null) {
                BufferAndBacklog live = subpartition.pollLive();
                if (live == null) {
                    return null;
                }
                buffer = live.buffer();
            }
            if (deduplication == null) {
                return buffer;
            }
            if (!buffer.isBuffer()) {
                return buffer;
            }
            try {
                Buffer rest = deduplication.data(buffer);
                if (rest != null) {
                    return rest;
                }
            } catch (LocalRecoveryImpossibleException e) {
                diverged = true;
                subpartition.producerDiverged(e);
                return null;
            } finally {
                if (deduplication.isDone()) {
                    deduplication = null;
                }
            }
        }
    }

    /**
     * Whether this stream is still the predecessor's, regenerated: the consumer has part of it
     * (skipped here), or replays it. A fresh epoch cut into it (a recovered source's new
     * checkpoint) would put a barrier where the original stream had records.
     *
     * <p>Lock-free: a task thread asks while a network thread holds this view and waits for the
     * subpartition.
     */
    boolean regeneratesPredecessorStream() {
        return deduplication != null || consumerReplays;
    }

    /**
     * The consumer has the data the producer's predecessor sent from epoch {@code restoredEpoch} on
     * (per epoch: bytes and checksum): skip it, checking it is the same. A consumer that {@code
     * replays} has nothing yet and reads the regenerated stream until its replay ends.
     */
    synchronized void continueAfter(
            long restoredEpoch, TreeMap<Long, long[]> received, boolean replays) {
        Deduplication plan = new Deduplication(subpartition.toString(), received);
        continued = new ContinuedStreamEvent(plan.total());
        deduplication = plan.isDone() ? null : plan;
        consumerReplays = replays;
    }

    /** The consumer's replay ended: the stream may take fresh epochs. */
    void consumerReplayEnded() {
        consumerReplays = false;
    }

    /**
     * A buffer that blocks the subpartition (an aligned barrier) announces nothing after it: the
     * consumer's channel insists on a backlog of 0 with it, since nothing follows until it resumes.
     */
    private BufferAndBacklog next(Buffer buffer) {
        blocked = buffer.getDataType().isBlockingUpstream();
        return blocked
                ? new BufferAndBacklog(buffer, 0, Buffer.DataType.NONE, sequenceNumber++)
                : new BufferAndBacklog(buffer, backlog(), nextDataType(), sequenceNumber++);
    }

    private int backlog() {
        int replayed = replay == null ? 0 : replay.remaining();
        return (held == null ? 0 : 1)
                + replayed
                + subpartition.source().getAvailabilityAndBacklog(false).getBacklog();
    }

    /** The type of what {@link #getNextBuffer()} would return next, NONE if nothing is ready. */
    private Buffer.DataType nextDataType() {
        if (continued != null || announces()) {
            return Buffer.DataType.EVENT_BUFFER;
        }
        if (held != null) {
            return held.getDataType();
        }
        if (replay != null) {
            Buffer.DataType replayed = replay.peekDataType();
            if (replayed != Buffer.DataType.NONE) {
                return replayed;
            }
        }
        ResultSubpartitionView source = subpartition.source();
        if (!subpartition.admitsLive()) {
            return Buffer.DataType.NONE;
        }
        if (source.getAvailabilityAndBacklog(false).isAvailable()) {
            return Buffer.DataType.EVENT_BUFFER;
        }
        return source.getAvailabilityAndBacklog(true).isAvailable()
                ? Buffer.DataType.DATA_BUFFER
                : Buffer.DataType.NONE;
    }

    @Override
    public synchronized AvailabilityWithBacklog getAvailabilityAndBacklog(
            boolean isCreditAvailable) {
        if (released || detached || blocked) {
            return new AvailabilityWithBacklog(false, 0);
        }
        if (!startEventSent || continued != null || announces()) {
            return new AvailabilityWithBacklog(true, backlog());
        }
        if (held != null) {
            // what goes out before the held item is an event, and so may the held item be: an
            // event needs no credit
            return new AvailabilityWithBacklog(
                    isCreditAvailable || held.getDataType().isEvent(), backlog());
        }
        if (replay != null && replay.remaining() > 0) {
            return new AvailabilityWithBacklog(
                    isCreditAvailable || replay.peekDataType().isEvent(), backlog());
        }
        ResultSubpartitionView source = subpartition.source();
        if (!subpartition.admitsLive()) {
            // the log holds the producer back: nothing goes out until it lets data through
            return new AvailabilityWithBacklog(
                    false, source.getAvailabilityAndBacklog(false).getBacklog());
        }
        return source.getAvailabilityAndBacklog(isCreditAvailable);
    }

    @Override
    public void notifyDataAvailable() {
        consumer.notifyDataAvailable(this);
    }

    @Override
    public void notifyPriorityEvent(int prioritySequenceNumber) {
        consumer.notifyPriorityEvent(prioritySequenceNumber);
    }

    @Override
    public void resumeConsumption() {
        boolean caughtUp;
        synchronized (this) {
            blocked = false;
            caughtUp = replay == null || replay.remaining() == 0;
        }
        subpartition.resumeConsumption(caughtUp);
        notifyDataAvailable();
    }

    @Override
    public void acknowledgeAllDataProcessed() {
        subpartition.source().acknowledgeAllDataProcessed();
    }

    /**
     * The subpartition could not move the producer's data into the log this view reads (any thread;
     * the caller tells the consumer): the consumer fails on its next read, and its recovery finds
     * the log unavailable.
     */
    void fail(Exception cause) {
        failure = new IOException("The in-flight log of " + subpartition + " lost data", cause);
    }

    /** Another consumer took over; this one gets nothing more. */
    void detach() {
        detached = true;
    }

    @Override
    public void releaseAllResources() throws IOException {
        if (!released) {
            released = true;
            synchronized (this) {
                if (held != null) {
                    held.recycleBuffer();
                    held = null;
                }
            }
            subpartition.detached(this);
        }
    }

    @Override
    public boolean isReleased() {
        return released || detached || subpartition.source().isReleased();
    }

    @Override
    public Throwable getFailureCause() {
        return subpartition.source().getFailureCause();
    }

    @Override
    public synchronized int unsynchronizedGetNumberOfQueuedBuffers() {
        return (held == null ? 0 : 1)
                + (replay == null ? 0 : replay.remaining())
                + subpartition.source().unsynchronizedGetNumberOfQueuedBuffers();
    }

    @Override
    public synchronized int getNumberOfQueuedBuffers() {
        return (held == null ? 0 : 1)
                + (replay == null ? 0 : replay.remaining())
                + subpartition.source().getNumberOfQueuedBuffers();
    }

    @Override
    public void notifyNewBufferSize(int newBufferSize) {
        subpartition.source().notifyNewBufferSize(newBufferSize);
    }

    @Override
    public int peekNextBufferSubpartitionId() throws IOException {
        return subpartition.source().peekNextBufferSubpartitionId();
    }
}
