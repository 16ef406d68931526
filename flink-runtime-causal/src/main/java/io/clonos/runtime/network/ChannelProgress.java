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
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.api.EndOfData;
import org.apache.flink.runtime.io.network.api.EndOfPartitionEvent;
import org.apache.flink.runtime.io.network.api.StopMode;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

/**
 * Per channel of a gate, how far the task got with it: the barrier of an alignment in progress, end
 * of recovered state, end of data, end of partition. Flink's gate keeps these for its own channels;
 * a channel whose producer died is read through a replacement gate, and its history must stay with
 * the channel the task knows.
 */
@Internal
final class ChannelProgress {

    private final int numberOfChannels;

    /** Per channel: the barrier the task was handed and has not resumed yet, -1 if none. */
    private final long[] alignedBarrier;

    private final BitSet endOfPartition = new BitSet();

    /**
     * Channels whose end of recovered state the task was handed: Flink resumes a restored task's
     * channels once each announced it, and counts a second announcement on a channel as a bug.
     */
    private final BitSet recoveredStateEnded = new BitSet();

    private final StopMode[] endOfData;

    ChannelProgress(int numberOfChannels) {
        this.numberOfChannels = numberOfChannels;
        this.alignedBarrier = new long[numberOfChannels];
        Arrays.fill(alignedBarrier, -1);
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
            alignedBarrier[channel] = ((CheckpointBarrier) event).getId();
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

    /** Whether the channel is blocked by a barrier the task was handed. */
    boolean isAligning(int channel) {
        return alignedBarrier[channel] >= 0;
    }

    /** The task resumed the channel after its barrier. */
    void alignmentResumed(int channel) {
        alignedBarrier[channel] = -1;
    }

    /**
     * The channel's producer is gone: the alignment the channel was part of cannot complete.
     *
     * @return the checkpoint of that alignment, -1 if the channel was not aligning
     */
    long abortAlignment(int channel) {
        long barrier = alignedBarrier[channel];
        alignedBarrier[channel] = -1;
        return barrier;
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
