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

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The in-flight logs of the result partitions produced on this TaskManager, by partition id. The
 * producing task reaches its logs here to truncate them when a checkpoint completes, to publish
 * their metrics and to learn whether they still regenerate its predecessor's stream.
 */
@Internal
public final class SubpartitionLogs {

    private static final Logger LOG = LoggerFactory.getLogger(SubpartitionLogs.class);

    private final Map<ResultPartitionID, Map<Integer, Entry>> partitions =
            new ConcurrentHashMap<>();

    /** The pending barriers of the producers that are held back when their logs are full. */
    private final Map<ResultPartitionID, LongSupplier> heldBack = new ConcurrentHashMap<>();

    /** Whether this TaskManager's logs can be full ({@code in-memory}) and hold producers back. */
    private volatile boolean holdsBack;

    /** Announces the producers' pending barriers to their consumers while any is held back. */
    @Nullable private ScheduledFuture<?> announcer;

    /** The thread of the retries and announcements of held-back logs; made when first needed. */
    @Nullable private ScheduledExecutorService heldBackThread;

    SubpartitionLogs() {}

    /**
     * The metrics of a subpartition; they exist before its log does, so gauges can be registered
     * early.
     */
    public SubpartitionLogMetrics metrics(ResultPartitionID partition, int subpartition) {
        return entry(partition, subpartition).metrics;
    }

    /** Truncates every log of a partition: checkpoint {@code checkpointId} completed. */
    public void truncateBefore(ResultPartitionID partition, long checkpointId) {
        for (Entry entry : entries(partition)) {
            LoggingSubpartition log = entry.log;
            if (log != null) {
                log.truncateBefore(checkpointId);
            }
        }
    }

    /**
     * The producer recovers with determinants from epoch {@code restoredEpoch}: the consumer of
     * subpartition {@code subpartition} already has what {@code answer} says it received, or
     * replays what its predecessor read.
     */
    public void continueAfter(
            ResultPartitionID partition,
            int subpartition,
            long restoredEpoch,
            DeterminantResponseEvent answer) {
        LoggingSubpartition log = get(partition, subpartition);
        if (log != null) {
            log.continueAfter(
                    restoredEpoch, answer.receivedFrom(restoredEpoch), answer.consumerReplays());
        }
    }

    /** A recovering consumer of subpartition {@code subpartition} ended its replay. */
    public void consumerReplayEnded(ResultPartitionID partition, int subpartition) {
        LoggingSubpartition log = get(partition, subpartition);
        if (log != null) {
            log.consumerReplayEnded();
        }
    }

    /**
     * Whether a subpartition of the partition still regenerates a stream that a consumer has, or
     * replays, as the producer's predecessor sent it: no fresh epoch may start in it yet.
     */
    public boolean regeneratesPredecessorStream(ResultPartitionID partition) {
        for (Entry entry : entries(partition)) {
            LoggingSubpartition log = entry.log;
            if (log != null && log.regeneratesPredecessorStream()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The producer of {@code partition} is held back while a log of it is full, and let through
     * while {@code pendingBarriers} names a barrier that log has not sent yet ({@link
     * LogBackpressure}).
     */
    void holdBackWhenFull(ResultPartitionID partition, LongSupplier pendingBarriers) {
        if (!holdsBack) {
            return;
        }
        heldBack.put(partition, pendingBarriers);
        synchronized (this) {
            if (announcer == null) {
                announcer =
                        heldBackThread()
                                .scheduleWithFixedDelay(
                                        this::announcePendingBarriers,
                                        LogBackpressure.RETRY_MILLIS,
                                        LogBackpressure.RETRY_MILLIS,
                                        TimeUnit.MILLISECONDS);
            }
        }
    }

    /** Runs {@code action} {@link LogBackpressure#RETRY_MILLIS} from now. */
    void retryLater(Runnable action) {
        heldBackThread().schedule(action, LogBackpressure.RETRY_MILLIS, TimeUnit.MILLISECONDS);
    }

    private synchronized ScheduledExecutorService heldBackThread() {
        if (heldBackThread == null) {
            heldBackThread =
                    Executors.newSingleThreadScheduledExecutor(
                            runnable -> {
                                Thread thread =
                                        new Thread(runnable, "clonos-held-back-in-flight-logs");
                                thread.setDaemon(true);
                                return thread;
                            });
        }
        return heldBackThread;
    }

    /** This TaskManager's logs can be full and hold their producers back from now on. */
    public void holdBackFullLogs() {
        holdsBack = true;
    }

    /**
     * Tells the consumers of every producer that may be held back which barrier it has pending,
     * ahead of the data queued before it: a consumer's own full log may hold it back with its input
     * buffers full, and the barrier behind them is the one that would free its log.
     */
    private void announcePendingBarriers() {
        try {
            announceAll();
        } catch (RuntimeException e) {
            // a failed round must not end the periodic announcements
            LOG.warn("Announcing pending barriers failed; trying again.", e);
        }
    }

    private void announceAll() {
        heldBack.forEach(
                (partition, pending) -> {
                    long barrier = pending.getAsLong();
                    for (Entry entry : entries(partition)) {
                        LoggingSubpartition log = entry.log;
                        if (log != null) {
                            log.announce(barrier);
                        }
                    }
                });
    }

    /** The pending barriers of the producer of {@code partition}; null if it is not held back. */
    @Nullable
    LongSupplier pendingBarriers(ResultPartitionID partition) {
        return heldBack.get(partition);
    }

    /**
     * The highest checkpoint whose barrier the producer of {@code partition}, a task of this
     * TaskManager, has pending; {@code Long.MIN_VALUE} if it is not known.
     */
    long pendingBarrier(ResultPartitionID partition) {
        LongSupplier pending = heldBack.get(partition);
        return pending == null ? Long.MIN_VALUE : pending.getAsLong();
    }

    void register(ResultPartitionID partition, int subpartition, LoggingSubpartition log) {
        entry(partition, subpartition).log = log;
    }

    /** Forgets a subpartition whose consumer read it to the end. */
    void unregister(ResultPartitionID partition, int subpartition) {
        partitions.computeIfPresent(
                partition,
                (p, entries) -> {
                    entries.remove(subpartition);
                    return entries.isEmpty() ? null : entries;
                });
    }

    LoggingSubpartition get(ResultPartitionID partition, int subpartition) {
        Map<Integer, Entry> entries = partitions.get(partition);
        Entry entry = entries == null ? null : entries.get(subpartition);
        return entry == null ? null : entry.log;
    }

    List<LoggingSubpartition> remove(ResultPartitionID partition) {
        List<LoggingSubpartition> logs = new ArrayList<>();
        heldBack.remove(partition);
        Map<Integer, Entry> removed = partitions.remove(partition);
        if (removed != null) {
            removed.values().stream().filter(e -> e.log != null).forEach(e -> logs.add(e.log));
        }
        return logs;
    }

    private Entry entry(ResultPartitionID partition, int subpartition) {
        return partitions
                .computeIfAbsent(partition, p -> new ConcurrentHashMap<>())
                .computeIfAbsent(subpartition, s -> new Entry());
    }

    private List<Entry> entries(ResultPartitionID partition) {
        Map<Integer, Entry> entries = partitions.get(partition);
        return entries == null ? List.of() : new ArrayList<>(entries.values());
    }

    private static final class Entry {
        final SubpartitionLogMetrics metrics = new SubpartitionLogMetrics();
        volatile LoggingSubpartition log;
    }

    void clear() {
        partitions.clear();
        heldBack.clear();
        synchronized (this) {
            if (announcer != null) {
                announcer.cancel(false);
                announcer = null;
            }
            if (heldBackThread != null) {
                heldBackThread.shutdownNow();
                heldBackThread = null;
            }
        }
    }
}
