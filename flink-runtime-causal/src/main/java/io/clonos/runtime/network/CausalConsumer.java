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

import io.clonos.runtime.causal.CausalLogId;
import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.CorruptCausalLogException;
import io.clonos.runtime.causal.LocalRecoveryImpossibleException;
import io.clonos.runtime.causal.SharedDelta;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.event.AbstractEvent;
import org.apache.flink.runtime.event.TaskEvent;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntConsumer;

/**
 * A gate's role as a consumer in the causal protocol (paper section 4.2): it holds the causal logs
 * its producers piggyback ahead of their data and counts the data bytes it received per channel and
 * epoch, and it answers every new connection with both ({@link DeterminantResponseEvent}), so that
 * a recovered producer replays its predecessor's choices and continues its stream exactly where
 * this consumer stopped receiving it.
 *
 * <p>Task thread, but for {@link #truncateBefore}.
 */
@Internal
final class CausalConsumer {

    private static final Logger LOG = LoggerFactory.getLogger(CausalConsumer.class);

    /** Sends an event to a channel's current producer; false if the channel has none now. */
    interface Producers {
        boolean send(int channel, TaskEvent event) throws IOException;

        /** The subpartition of its producer a channel consumes. */
        int subpartition(int channel);
    }

    private final CausalTask task;
    private final String taskName;
    private final Producers producers;

    /**
     * Called when a channel's producer restarted with a stream that does not continue the old one.
     */
    private final IntConsumer streamRestarts;

    private final List<Set<CausalLogId>> logsPerChannel = new ArrayList<>();
    private final List<TreeMap<Long, EpochBytes>> receivedPerEpoch = new ArrayList<>();

    /** Per channel: the epoch of the data arriving now. */
    private final long[] streamEpoch;

    /** Channels whose producer died and whose next stream may restart at a record boundary. */
    private final boolean[] mayRestart;

    /**
     * Per channel: what it received of its current epoch, the entry of {@link #receivedPerEpoch}
     * for {@link #streamEpoch}; null until the channel's next buffer looks it up.
     */
    private final EpochBytes[] receiving;

    /** Channels whose producer waits for this recovering consumer's answer. */
    private final BitSet unanswered = new BitSet();

    private volatile long completedCheckpoint;
    private long truncatedBefore;

    /**
     * @param restoredCheckpoint the checkpoint the task was restored from: the epoch of the first
     *     data on every channel
     * @param streamRestarts told, before the first data of a channel's restarted stream reaches the
     *     task, that what the task holds of the old stream's last record must be dropped
     */
    CausalConsumer(
            CausalTask task,
            String taskName,
            int numberOfChannels,
            long restoredCheckpoint,
            Producers producers,
            IntConsumer streamRestarts) {
        this.task = task;
        this.taskName = taskName;
        this.producers = producers;
        this.streamRestarts = streamRestarts;
        this.streamEpoch = new long[numberOfChannels];
        this.mayRestart = new boolean[numberOfChannels];
        this.receiving = new EpochBytes[numberOfChannels];
        for (int i = 0; i < numberOfChannels; i++) {
            logsPerChannel.add(new HashSet<>());
            receivedPerEpoch.add(new TreeMap<>());
            streamEpoch[i] = restoredCheckpoint;
        }
    }

    /**
     * Connection-level handling of what arrives on a channel; false removes it. Runs for every
     * buffer, inlined by the compiler into Flink's per-record loop: what is not done per buffer
     * (truncating, a new epoch, a restarted stream) is in methods of its own, which it leaves out.
     */
    boolean accept(BufferOrEvent boe, int channel) throws IOException {
        if (completedCheckpoint > truncatedBefore) {
            truncateReceived();
        }
        if (boe.isBuffer()) {
            EpochBytes bytes = receiving[channel];
            if (bytes == null) {
                bytes = startReceiving(channel);
            }
            bytes.add(boe.getBuffer());
            if (mayRestart[channel]) {
                // a restarted producer's stream that does not continue the old one
                mayRestart[channel] = false;
                streamRestarts.accept(channel);
            }
            return true;
        }
        AbstractEvent event = boe.getEvent();
        if (event instanceof CausalLogDeltaEvent) {
            store(((CausalLogDeltaEvent) event), channel);
            return false;
        }
        if (event instanceof ContinuedStreamEvent) {
            ContinuedStreamEvent continued = (ContinuedStreamEvent) event;
            if (continued.isFresh()) {
                freshStream(channel);
            } else {
                LOG.info(
                        "Channel {} of {} continues its stream after {} bytes its new producer skipped.",
                        channel,
                        taskName,
                        continued.skippedBytes());
                mayRestart[channel] = false;
            }
            return false;
        }
        if (event instanceof ReplayStartEvent) {
            answer(channel);
        } else if (event instanceof CheckpointBarrier) {
            long epoch = Math.max(streamEpoch[channel], ((CheckpointBarrier) event).getId());
            if (epoch != streamEpoch[channel]) {
                streamEpoch[channel] = epoch;
                receiving[channel] = null;
            }
        }
        return true;
    }

    private void store(CausalLogDeltaEvent event, int channel) {
        try {
            for (SharedDelta shared : event.deltas()) {
                task.held().merge(shared);
                logsPerChannel.get(channel).add(shared.delta().log());
            }
        } catch (CorruptCausalLogException e) {
            throw new LocalRecoveryImpossibleException(
                    "The causal log received on channel "
                            + channel
                            + " of "
                            + taskName
                            + " is corrupt",
                    e);
        }
    }

    /**
     * Tells the producer of a new connection what this consumer holds of its and its upstream's
     * logs and what it received from it. A consumer that recovers itself answers once it has its
     * own determinants: they come with the logs of its upstream that its consumers held.
     */
    private void answer(int channel) throws IOException {
        if (task.recovery().isWaiting()) {
            LOG.debug(
                    "{} answers the producer of channel {} once it has its own determinants ({}).",
                    taskName,
                    channel,
                    task.recovery().state());
            unanswered.set(channel);
            return;
        }
        unanswered.clear(channel);
        Set<CausalLogId> logs = new HashSet<>(logsPerChannel.get(channel));
        logs.addAll(task.handedBack());
        List<SharedDelta> deltas = new ArrayList<>();
        for (CausalLogId log : logs) {
            deltas.addAll(task.held().all(log));
        }
        int subpartition = producers.subpartition(channel);
        boolean replays = task.recovery().isReplaying();
        if (producers.send(
                channel,
                new DeterminantResponseEvent(
                        subpartition, receivedPerEpoch.get(channel), deltas, replays))) {
            LOG.debug(
                    "{} answered the producer of channel {} with {} deltas{}.",
                    taskName,
                    channel,
                    deltas.size(),
                    replays ? " (replaying)" : "");
            if (replays) {
                // task thread: the replay ends on it, after this answer went out
                task.recovery().whenRunning(() -> replayEnded(channel, subpartition));
            }
        } else {
            // the producer is gone again; its next attempt asks anew
            LOG.info("{} cannot answer the producer of channel {}: it is gone.", taskName, channel);
        }
    }

    /** Tells the channel's current producer that this consumer's replay ended. */
    private void replayEnded(int channel, int subpartition) {
        try {
            producers.send(channel, new ReplayEndEvent(subpartition));
        } catch (IOException e) {
            // the producer is gone again; its next attempt is answered anew
            LOG.info(
                    "{} cannot tell the producer of channel {} that its replay ended: {}",
                    taskName,
                    channel,
                    e.getMessage());
        }
    }

    /**
     * Whether a producer waits for this consumer's answer, which it sends once it has its
     * determinants.
     */
    boolean hasUnanswered() {
        return !unanswered.isEmpty();
    }

    /** Answers the producers that waited for this task's own determinants, once it has them. */
    void answerWaitingProducers() throws IOException {
        if (!unanswered.isEmpty() && !task.recovery().isWaiting()) {
            for (int channel = unanswered.nextSetBit(0);
                    channel >= 0;
                    channel = unanswered.nextSetBit(channel + 1)) {
                answer(channel);
            }
        }
    }

    /**
     * The channel's producer starts a stream of its own: what this consumer holds of its
     * predecessor's stream and log is of no use to it.
     */
    private void freshStream(int channel) {
        for (CausalLogId log : logsPerChannel.get(channel)) {
            task.held().remove(log);
        }
        logsPerChannel.get(channel).clear();
        receivedPerEpoch.get(channel).clear();
        receiving[channel] = null;
    }

    /** The channel's producer is gone: its new attempt may continue the stream, or start anew. */
    void producerLost(int channel) {
        mayRestart[channel] = true;
    }

    /** Any thread: applied by the task thread on its next read. */
    void truncateBefore(long checkpointId) {
        completedCheckpoint = Math.max(completedCheckpoint, checkpointId);
    }

    private void truncateReceived() {
        long completed = completedCheckpoint;
        if (completed > truncatedBefore) {
            truncatedBefore = completed;
            for (TreeMap<Long, EpochBytes> received : receivedPerEpoch) {
                received.headMap(completed, false).clear();
            }
            // a channel still in a truncated epoch starts its entry anew, as before
            Arrays.fill(receiving, null);
        }
    }

    /** The channel's first buffer of its epoch (or since a truncation): its entry. */
    private EpochBytes startReceiving(int channel) {
        EpochBytes bytes =
                receivedPerEpoch
                        .get(channel)
                        .computeIfAbsent(streamEpoch[channel], e -> new EpochBytes());
        receiving[channel] = bytes;
        return bytes;
    }
}
