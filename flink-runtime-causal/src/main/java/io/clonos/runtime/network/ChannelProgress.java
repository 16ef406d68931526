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
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.event.AbstractEvent;
import org.apache.flink.runtime.io.PullingAsyncDataInput.EndOfDataStatus;
import org.apache.flink.runtime.io.network.api.CancelCheckpointMarker;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.api.EndOfData;
import org.apache.flink.runtime.io.network.api.EndOfPartitionEvent;
import org.apache.flink.runtime.io.network.api.StopMode;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Per channel of a gate, how far the task got with it: the barrier of an alignment in progress, end
 * of recovered state, end of data, end of partition. Flink's gate keeps these for its own channels;
 * a channel whose producer died is read through a replacement gate, and its history must stay with
 * the channel the task knows.
 */
@Internal
final class ChannelProgress {

    private static final Logger LOG = LoggerFactory.getLogger(ChannelProgress.class);

    private final String taskName;

    private final int numberOfChannels;

    /** Per channel: the barrier the task was handed and has not resumed yet, -1 if none. */
    private final long[] alignedBarrier;

    /**
     * Per channel: the latest checkpoint whose barrier or cancellation the gate received, -1 if
     * none. The task may not have been handed it yet: while it replays, what arrived waits in the
     * input order's queue.
     */
    private final long[] receivedCheckpointEvent;

    /**
     * Channels aligned at a barrier of a connection that was replaced during a replay: the
     * alignment is the replay's to end, and the new connection has nothing blocked to resume.
     */
    private final BitSet alignedOnReplacedConnection = new BitSet();

    private final BitSet endOfPartition = new BitSet();

    /**
     * Channels whose end of recovered state the task was handed: Flink resumes a restored task's
     * channels once each announced it, and counts a second announcement on a channel as a bug.
     */
    private final BitSet recoveredStateEnded = new BitSet();

    private final StopMode[] endOfData;

    ChannelProgress(String taskName, int numberOfChannels) {
        this.taskName = taskName;
        this.numberOfChannels = numberOfChannels;
        this.alignedBarrier = new long[numberOfChannels];
        Arrays.fill(alignedBarrier, -1);
        this.receivedCheckpointEvent = new long[numberOfChannels];
        Arrays.fill(receivedCheckpointEvent, -1);
        this.endOfData = new StopMode[numberOfChannels];
    }

    /** The task was handed {@code boe}. */
    void delivered(BufferOrEvent boe) {
        if (boe.isBuffer()) {
            return;
        }
        int channel = boe.getChannelInfo().getInputChannelIdx();
        AbstractEvent event = boe.getEvent();
        if (event instanceof CheckpointBarrier) {
            long id = ((CheckpointBarrier) event).getId();
            alignedBarrier[channel] = id;
        } else if (event instanceof EndOfPartitionEvent) {
            endOfPartition.set(channel);
        } else if (event instanceof EndOfData) {
            endOfData[channel] = ((EndOfData) event).getStopMode();
        }
    }

    /** Whether the channel's partition ended: its producer is done and will not be replaced. */
    boolean partitionEnded(int channel) {
        return endOfPartition.get(channel);
    }

    /** Whether the task was handed the channel's end of data. */
    boolean dataEnded(int channel) {
        return endOfData[channel] != null;
    }

    int numberOfChannels() {
        return numberOfChannels;
    }

    /** The checkpoint whose barrier blocks the channel (the task was handed it), -1 if none. */
    long alignedCheckpoint(int channel) {
        return alignedBarrier[channel];
    }

    /** Whether the channel is blocked by a barrier the task was handed. */
    boolean isAligning(int channel) {
        return alignedBarrier[channel] >= 0;
    }

    /**
     * The checkpoint a barrier or a {@link CancelCheckpointMarker} belongs to; -1 for any other
     * event. A producer's stream carries one of the two per checkpoint, in the order of their ids.
     */
    static long checkpointOf(AbstractEvent event) {
        if (event instanceof CheckpointBarrier barrier) {
            return barrier.getId();
        }
        return event instanceof CancelCheckpointMarker cancel ? cancel.getCheckpointId() : -1;
    }

    /**
     * Whether the gate drops a barrier or cancellation that a replacement connection repeats;
     * records any other it receives. A restarted producer regenerates its predecessor's stream,
     * events included, and skips only the data the consumer has. Received, not handed: a recovering
     * task may not have reached the first one in its replay yet, and would otherwise read it twice,
     * the second time where its predecessor read data. A cancellation counts as a barrier does:
     * Flink ignores a repeated one, but a running task logs every event it reads, so its log would
     * put one where the regenerated stream has data, and a task that recovers from that log later
     * cannot replay it.
     */
    boolean dropsRepeat(int channel, AbstractEvent event, boolean replacement) {
        long checkpointId = checkpointOf(event);
        if (checkpointId < 0) {
            return false;
        }
        if (replacement && checkpointId <= receivedCheckpointEvent[channel]) {
            LOG.info(
                    "Channel {} of {} drops a restarted producer's repeat of {}.",
                    channel,
                    taskName,
                    event);
            return true;
        }
        receivedCheckpointEvent[channel] = Math.max(receivedCheckpointEvent[channel], checkpointId);
        return false;
    }

    /**
     * The task resumed the channel after its barrier.
     *
     * @return whether the channel's connection is to be resumed: not where the barrier came through
     *     a connection that was replaced since
     */
    boolean alignmentResumed(int channel) {
        alignedBarrier[channel] = -1;
        boolean replaced = alignedOnReplacedConnection.get(channel);
        alignedOnReplacedConnection.clear(channel);
        return !replaced;
    }

    /**
     * The channel's producer is gone. Running normally, the alignment the channel was part of
     * cannot complete: the new producer's data, not blocked behind the barrier, would overtake it.
     * While the task replays its input in the logged order, that order holds the new data back
     * until the predecessor read it, after the alignment; the alignment stays, as it did for the
     * predecessor, until the replay ends ({@link #replayEnded}).
     *
     * @return the checkpoint of the alignment to cancel now, -1 if none
     */
    long producerLost(int channel, boolean replaysInOrder) {
        long barrier = alignedBarrier[channel];
        if (barrier >= 0 && replaysInOrder) {
            alignedOnReplacedConnection.set(channel);
            return -1;
        }
        alignedBarrier[channel] = -1;
        return barrier;
    }

    /**
     * The replay ended: alignments kept across a lost producer that are still open cannot complete
     * now that the order no longer holds the new data back.
     *
     * @return per channel, the checkpoint of the alignment to cancel
     */
    Map<Integer, Long> replayEnded() {
        Map<Integer, Long> cancelled = new TreeMap<>();
        for (int channel = alignedOnReplacedConnection.nextSetBit(0);
                channel >= 0;
                channel = alignedOnReplacedConnection.nextSetBit(channel + 1)) {
            if (alignedBarrier[channel] >= 0) {
                cancelled.put(channel, alignedBarrier[channel]);
                alignedBarrier[channel] = -1;
            }
        }
        alignedOnReplacedConnection.clear();
        return cancelled;
    }

    /**
     * The channel's producer was restarted afresh, without determinants: its stream starts over at
     * the producer's restored checkpoint, with records the task may have read already, and ends its
     * data anew. Where the task was handed the channel's end of data already, the channel is open
     * again, so that the task reads the new stream up to its own end; unless that end of data
     * completed the gate's: Flink has finished the task's operators then and drops every record
     * that still comes, so the task cannot take the new stream.
     *
     * @return whether the task can take the new stream
     */
    boolean streamStartsAfresh(int channel) {
        if (endOfData[channel] == null) {
            return true;
        }
        if (endOfDataStatus() != EndOfDataStatus.NOT_END_OF_DATA) {
            return false;
        }
        endOfData[channel] = null;
        return true;
    }

    /**
     * A producer announced the end of its recovered state on the channel.
     *
     * @return whether it is the channel's first announcement, the one the task must be handed
     */
    boolean recoveredStateEnded(int channel) {
        boolean first = !recoveredStateEnded.get(channel);
        recoveredStateEnded.set(channel);
        return first;
    }

    boolean isFinished() {
        return endOfPartition.cardinality() == numberOfChannels;
    }

    EndOfDataStatus endOfDataStatus() {
        if (Arrays.stream(endOfData).anyMatch(mode -> mode == null)) {
            return EndOfDataStatus.NOT_END_OF_DATA;
        }
        return Arrays.stream(endOfData).allMatch(mode -> mode == StopMode.DRAIN)
                ? EndOfDataStatus.DRAINED
                : EndOfDataStatus.STOPPED;
    }

    List<InputChannelInfo> unfinishedChannels(int gateIndex) {
        List<InputChannelInfo> unfinished = new ArrayList<>();
        for (int i = 0; i < numberOfChannels; i++) {
            if (!endOfPartition.get(i)) {
                unfinished.add(new InputChannelInfo(gateIndex, i));
            }
        }
        return unfinished;
    }
}
