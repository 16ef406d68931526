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
import io.clonos.runtime.causal.LocalRecoveryImpossibleException;
import io.clonos.runtime.inflightlog.InFlightLog;
import io.clonos.runtime.inflightlog.InFlightLogUnavailableException;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.api.EndOfPartitionEvent;
import org.apache.flink.runtime.io.network.api.serialization.EventSerializer;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.partition.BufferAvailabilityListener;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.ResultSubpartition.BufferAndBacklog;
import org.apache.flink.runtime.io.network.partition.ResultSubpartitionView;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;

import java.io.IOException;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * One output subpartition as Clonos serves it. Flink lets a pipelined subpartition be read once;
 * this class is that one reader, for the life of the producer: every buffer it takes from Flink's
 * view goes to the in-flight log on its way out, and whoever is the consumer now (the first one, or
 * one that replaced a failed consumer) reads through a {@link ReplayingSubpartitionView}, which
 * replays the log before it passes on live data.
 *
 * <p>While no consumer is attached (between a consumer's failure and its replacement's connection)
 * the live data is moved into the log as it comes, so the producer keeps running. The same holds
 * while the consumer reads a replay of the log: a replacement that lags behind its replay (it
 * restores, compacts, catches up) would otherwise fill Flink's queue, whose buffers the producer
 * shares with its other consumers, and stop the producer for all of them. The consumer reads the
 * live data from Flink's queue again once its replay caught up with the log. The producer runs
 * ahead of such a consumer by at most {@code maxRunAheadBytes} in the log: a consumer that is
 * slower for good (the job's bottleneck) holds its producer back through Flink's queue again, as it
 * did before its failure, instead of letting the producer fill the log's disk.
 */
@Internal
final class LoggingSubpartition implements BufferAvailabilityListener {

    private static final Logger LOG = LoggerFactory.getLogger(LoggingSubpartition.class);

    private final ClonosNetworkContext context;
    private final ResultPartitionID partitionId;
    private final int index;
    private final String name;
    private final InFlightLog log;
    private final SubpartitionLogMetrics metrics;
    private final LogBackpressure backpressure;

    /** How far the producer may run ahead, in the log, of a consumer that reads its replay. */
    private final long maxRunAheadBytes;

    /**
     * The bytes in the log the current consumer has not read yet, while it reads its replay ({@link
     * #liveThroughLog}); the producer's thread adds, the network thread takes away.
     */
    private final AtomicLong unreadBytes = new AtomicLong();

    /** The causal side of the task writing this subpartition; looked up once the task exists. */
    @Nullable private volatile CausalTask causalTask;

    /** Flink's view of the subpartition; set once, right after construction. */
    private ResultSubpartitionView source;

    @GuardedBy("this")
    @Nullable
    /** Volatile: read without this subpartition's lock by {@link #regeneratesPredecessorStream}. */
    private volatile ReplayingSubpartitionView reader;

    @GuardedBy("this")
    private boolean endOfPartitionSent;

    /**
     * Flink's subpartition stopped after an aligned barrier and waits for the consumer to resume
     * it.
     */
    @GuardedBy("this")
    private boolean sourceBlocked;

    /**
     * The current consumer reads a replay of the log, so the live data goes into the log as it
     * comes. Written under this lock; read without it by the producer's notices of data.
     */
    private volatile boolean liveThroughLog;

    LoggingSubpartition(
            ClonosNetworkContext context,
            ResultPartitionID partitionId,
            int index,
            InFlightLog log,
            SubpartitionLogMetrics metrics,
            long maxRunAheadBytes) {
        this.context = context;
        this.maxRunAheadBytes = maxRunAheadBytes;
        this.partitionId = partitionId;
        this.index = index;
        this.name = partitionId + "#" + index;
        this.log = log;
        this.metrics = metrics;
        this.backpressure =
                new LogBackpressure(
                        log,
                        new LogBackpressure.Producer() {
                            @Override
                            public LongSupplier pendingBarriers() {
                                return context.subpartitionLogs().pendingBarriers(partitionId);
                            }

                            @Override
                            public boolean recovers() {
                                CausalTask task = causalTask();
                                return (task != null && !task.recovery().isRunning())
                                        || regeneratesPredecessorStream();
                            }

                            @Override
                            public boolean sendsEvent() {
                                // without credit Flink's view is available only for an event
                                return source.getAvailabilityAndBacklog(false).isAvailable();
                            }
                        },
                        metrics,
                        context.subpartitionLogs()::retryLater,
                        () -> notifyDataAvailable(null));
        metrics.attach(log);
    }

    void setSource(ResultSubpartitionView source) {
        this.source = source;
    }

    ResultSubpartitionView source() {
        return source;
    }

    /** Hands the subpartition to a (new) consumer: the replay of the log, then live data. */
    synchronized ReplayingSubpartitionView attach(BufferAvailabilityListener consumer)
            throws InFlightLogUnavailableException {
        if (reader != null) {
            LOG.info(
                    "{}: a new consumer replaces the current one; replaying {} buffers from epoch {}.",
                    name,
                    log.numberOfBuffers(),
                    log.oldestEpoch());
            reader.detach();
        }
        long startEpoch = log.oldestEpoch();
        InFlightLog.Cursor replay = log.replay();
        if (reader == null && replay.remaining() > 0) {
            // a consumer that replaces one whose connection is gone: what it is fed again
            LOG.info(
                    "{}: a consumer connects; replaying {} buffers ({} bytes, {} of them on disk) from epoch {}.",
                    name,
                    replay.remaining(),
                    log.sizeInBytes(),
                    log.bytesOnDisk(),
                    startEpoch);
        }
        reader = new ReplayingSubpartitionView(this, consumer, replay, startEpoch, metrics);
        liveThroughLog = replay.remaining() > 0;
        unreadBytes.set(log.sizeInBytes());
        context.causalTasks().consumerConnected(partitionId, index);
        return reader;
    }

    /**
     * The view read {@code bytes} from the log (network thread, holding the view's lock). When that
     * brings the consumer back within the run-ahead, what waits in Flink's queue moves into the
     * log: the producer's thread, held back, may not tell of data again.
     */
    void readFromLog(ReplayingSubpartitionView view, int bytes) {
        long unread = unreadBytes.addAndGet(-bytes);
        if (liveThroughLog && unread < maxRunAheadBytes && unread + bytes >= maxRunAheadBytes) {
            synchronized (this) {
                if (reader == view && liveThroughLog) {
                    moveLiveDataIntoLog(view);
                }
            }
        }
    }

    /**
     * The view's replay returned everything logged so far: true when the view is to read the live
     * data from Flink's queue from now on, which then stays there; false when the producer moved
     * more into the log meanwhile, which the replay returns first.
     */
    synchronized boolean replayCaughtUp(ReplayingSubpartitionView view, InFlightLog.Cursor replay) {
        if (replay.remaining() > 0) {
            return false;
        }
        if (reader == view) {
            liveThroughLog = false;
        }
        return true;
    }

    /**
     * The producer's causal side, whose logs this subpartition piggybacks; null without causal
     * logging or before the producing task registered it.
     */
    @Nullable
    CausalTask causalTask() {
        CausalTask known = causalTask;
        if (known == null) {
            causalTask = known = context.causalTasks().of(partitionId);
        }
        return known;
    }

    /**
     * The producer recovers with determinants: the current consumer already has the data it will
     * regenerate from epoch {@code restoredEpoch} on, which is logged but not sent again.
     */
    synchronized void continueAfter(
            long restoredEpoch, TreeMap<Long, long[]> received, boolean consumerReplays) {
        if (reader != null) {
            reader.continueAfter(restoredEpoch, received, consumerReplays);
            if (consumerReplays) {
                LOG.info(
                        "{}: the consumer recovers too; no fresh epoch starts in its stream until its replay ended.",
                        name);
            }
        }
    }

    /** The current consumer, which recovered too, ended its replay. */
    void consumerReplayEnded() {
        ReplayingSubpartitionView current = reader;
        if (current != null && current.regeneratesPredecessorStream()) {
            current.consumerReplayEnded();
            LOG.info("{}: the consumer's replay ended.", name);
        }
    }

    /**
     * Lock-free, since the task thread asks while a network thread may hold the reader's lock and
     * wait for this subpartition's: taking both here would deadlock.
     */
    boolean regeneratesPredecessorStream() {
        ReplayingSubpartitionView current = reader;
        return current != null && current.regeneratesPredecessorStream();
    }

    /** The regenerated output differs from what the consumer received: the producer fails. */
    void producerDiverged(LocalRecoveryImpossibleException e) {
        LOG.warn("{}: {}", name, e.getMessage());
        CausalTask task = context.causalTasks().of(partitionId);
        if (task != null) {
            task.fail(e);
        }
    }

    /**
     * The next live buffer, logged. Its epoch ends after a checkpoint barrier, which starts the
     * barrier's epoch.
     */
    @Nullable
    synchronized BufferAndBacklog pollLive() throws IOException {
        if (!admitsLive()) {
            return null;
        }
        BufferAndBacklog next = source.getNextBuffer();
        if (next != null) {
            log(next.buffer());
        }
        return next;
    }

    /**
     * Whether live data may be taken from Flink's subpartition into the log now; false while the
     * log is full and holds the producer back ({@link LogBackpressure}).
     */
    boolean admitsLive() {
        return backpressure.admits();
    }

    /**
     * The producer has checkpoint {@code pendingBarrier}'s barrier pending: a consumer whose full
     * log holds it back hears of it ahead of the data queued before the barrier, which it may not
     * have the buffers to receive until it sends again ({@link LogBackpressure}).
     */
    void announce(long pendingBarrier) {
        ReplayingSubpartitionView current = reader;
        if (current != null
                && pendingBarrier > log.currentEpoch()
                && current.announce(pendingBarrier)) {
            current.notifyDataAvailable();
        }
    }

    @GuardedBy("this")
    private void log(Buffer buffer) throws IOException {
        sourceBlocked |= buffer.getDataType().isBlockingUpstream();
        log.append(buffer);
        if (!buffer.isBuffer()) {
            Object event =
                    EventSerializer.fromSerializedEvent(
                            buffer.getNioBufferReadable(), getClass().getClassLoader());
            LOG.debug("{}: logs {} after {} buffers.", name, event, log.numberOfBuffers());
            if (event instanceof CheckpointBarrier) {
                long epoch = ((CheckpointBarrier) event).getId();
                if (epoch > log.currentEpoch()) {
                    log.startEpoch(epoch);
                }
            } else if (event instanceof EndOfPartitionEvent) {
                endOfPartitionSent = true;
            }
        }
    }

    /**
     * The consumer finished aligning on the last blocking barrier it was sent. Flink's subpartition
     * is resumed only when that barrier was the one it stopped at, i.e. when the consumer has read
     * everything that was logged; a barrier replayed from further back resumes only the replay.
     */
    synchronized void resumeConsumption(boolean replayCaughtUp) {
        if (replayCaughtUp && sourceBlocked) {
            sourceBlocked = false;
            source.resumeConsumption();
        }
    }

    /** Checkpoint {@code checkpointId} completed: its epoch is the oldest a consumer can need. */
    synchronized void truncateBefore(long checkpointId) {
        log.truncateBefore(checkpointId);
    }

    synchronized void detached(ReplayingSubpartitionView view) throws IOException {
        if (reader != view) {
            return;
        }
        reader = null;
        if (endOfPartitionSent) {
            // The consumer has read everything the producer will ever send: done.
            close();
        } else {
            drainIntoLog();
        }
    }

    /**
     * The producer's thread tells of data, about once per buffer it finishes. With a consumer that
     * reads live data it does not wait for this subpartition's lock, which the network thread holds
     * while it logs a buffer (a spill writes to disk): it would wait on every such write. A
     * consumer that is detached meanwhile has its notice ignored ({@link ReplayingSubpartitionView}
     * is then not available), and {@link #detached} moves what arrived before into the log. Without
     * a consumer, or with one that reads a replay, the producer's thread moves the data into the
     * log itself.
     */
    @Override
    public void notifyDataAvailable(ResultSubpartitionView view) {
        ReplayingSubpartitionView current = reader;
        if (current != null && !liveThroughLog) {
            current.notifyDataAvailable();
            return;
        }
        synchronized (this) {
            current = reader;
            if (current == null || liveThroughLog) {
                moveLiveDataIntoLog(current);
            }
        }
        if (current != null) {
            current.notifyDataAvailable();
        }
    }

    /** {@link #drainIntoLog}, for {@code current}, the consumer attached (or null). */
    @GuardedBy("this")
    private void moveLiveDataIntoLog(@Nullable ReplayingSubpartitionView current) {
        try {
            drainIntoLog();
        } catch (IOException | RuntimeException e) {
            // a buffer may have been taken from Flink's subpartition and not logged: the log
            // must not replay a stream with a hole, nor the consumer read one
            log.invalidate("moving data into it failed: " + e);
            if (current != null) {
                current.fail(e);
            }
        }
    }

    @Override
    public void notifyPriorityEvent(int prioritySequenceNumber) {
        ReplayingSubpartitionView current;
        synchronized (this) {
            current = reader;
        }
        if (current != null) {
            current.notifyPriorityEvent(prioritySequenceNumber);
        }
    }

    @GuardedBy("this")
    private void drainIntoLog() throws IOException {
        if (source == null || source.isReleased()) {
            // source == null: Flink announces data while the view is being created, before
            // the view is handed to us; the consumer that is about to attach will read it
            return;
        }
        while (admitsLive() && (reader == null || unreadBytes.get() < maxRunAheadBytes)) {
            if (sourceBlocked) {
                // Flink's subpartition stopped after an aligned barrier for its consumer's
                // alignment; the barrier is in the log, and whoever reads it there stops for its
                // alignment (ReplayingSubpartitionView): the producer goes on
                sourceBlocked = false;
                source.resumeConsumption();
            }
            BufferAndBacklog next = source.getNextBuffer();
            if (next == null) {
                return;
            }
            try {
                log(next.buffer());
                if (reader != null) {
                    unreadBytes.addAndGet(next.buffer().readableBytes());
                }
            } finally {
                next.buffer().recycleBuffer();
            }
        }
    }

    synchronized void close() throws IOException {
        context.subpartitionLogs().unregister(partitionId, index);
        log.close();
        if (!source.isReleased()) {
            source.releaseAllResources();
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
