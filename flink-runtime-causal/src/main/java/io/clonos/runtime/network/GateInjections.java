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
import org.apache.flink.runtime.io.network.api.CancelCheckpointMarker;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * The items a gate makes itself and hands its task before anything else: announcements on behalf of
 * producers, and cancellations of alignments that no barrier will complete.
 *
 * <p>An alignment is cancelled where a channel's producer was lost after its barrier, and where the
 * coordinator aborted the alignment's checkpoint. The latter is Clonos's stand-in for Flink's own
 * cancellation: a Flink source that declines a checkpoint sends a {@link CancelCheckpointMarker}
 * downstream, but a Clonos source that declines one while it replays or regenerates its
 * predecessor's stream sends nothing (a marker there would be an event its predecessor never sent),
 * so its consumers would hold the channels of the other producers, whose barriers they have, until
 * the next checkpoint's barrier, a whole checkpoint interval later, and the job would stall on the
 * recovering task. Each cancellation reaches the task through the input order, which logs it
 * ({@link InputOrder#injected}), so a task that recovers later cancels at the same place. None is
 * made while the task replays, where the logged order decides, nor while its output still
 * regenerates its predecessor's ({@code CausalTask#choosesFreely}): its predecessor made no choice
 * there, and a cancellation would put a marker where its consumers have a barrier or data.
 *
 * <p>The queue and the cancellations of aborted checkpoints are the task thread's; the
 * coordinator's aborts arrive on any thread.
 */
@Internal
final class GateInjections {

    private static final Logger LOG = LoggerFactory.getLogger(GateInjections.class);

    private final String taskName;
    private final int gateIndex;
    private final Queue<BufferOrEvent> queue = new ArrayDeque<>();

    /** The latest checkpoint the coordinator aborted, -1 if none. */
    private volatile long abortedUpTo = -1;

    /** Completed when an abort arrives: a task that waits for input polls to cancel. */
    private volatile CompletableFuture<Void> abortArrived = new CompletableFuture<>();

    /** The latest checkpoint whose alignment this gate cancelled for an abort (task thread). */
    private long cancelledUpTo = -1;

    GateInjections(String taskName, int gateIndex) {
        this.taskName = taskName;
        this.gateIndex = gateIndex;
    }

    void add(BufferOrEvent item) {
        queue.add(item);
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    @Nullable
    BufferOrEvent poll() {
        return queue.poll();
    }

    /**
     * Cancels the task's alignment of checkpoint {@code barrier}, if any (-1), on {@code channel}.
     */
    void cancelAlignment(int channel, long barrier) {
        if (barrier >= 0) {
            queue.add(cancellation(gateIndex, channel, barrier));
        }
    }

    /** The cancellation of the task's alignment of a checkpoint, as read on a channel. */
    static BufferOrEvent cancellation(int gateIndex, int channel, long checkpointId) {
        return new BufferOrEvent(
                new CancelCheckpointMarker(checkpointId), new InputChannelInfo(gateIndex, channel));
    }

    /** The coordinator aborted checkpoint {@code checkpointId}; any thread. */
    void checkpointAborted(long checkpointId) {
        CompletableFuture<Void> arrived;
        synchronized (this) {
            if (checkpointId <= abortedUpTo) {
                return;
            }
            abortedUpTo = checkpointId;
            arrived = abortArrived;
            abortArrived = new CompletableFuture<>();
        }
        arrived.complete(null);
    }

    /** Completes when the coordinator aborts a checkpoint after this call. */
    CompletableFuture<?> abortArrived() {
        return abortArrived;
    }

    /** Whether an alignment of an aborted checkpoint waits to be cancelled (task thread). */
    boolean hasAbortedAlignment(ChannelProgress progress) {
        return alignedOnAborted(progress) >= 0;
    }

    /**
     * Cancels the task's alignment of a checkpoint the coordinator aborted, if it has one and the
     * task chooses freely (task thread; {@code choosesFreely} is asked only then, not per poll).
     */
    void cancelAbortedAlignment(ChannelProgress progress, BooleanSupplier choosesFreely) {
        int channel = alignedOnAborted(progress);
        if (channel < 0 || !choosesFreely.getAsBoolean()) {
            return;
        }
        long checkpoint = progress.alignedCheckpoint(channel);
        cancelledUpTo = checkpoint;
        LOG.info(
                "{} cancels its alignment of checkpoint {} on channel {} of gate {}: the coordinator aborted the checkpoint.",
                taskName,
                checkpoint,
                channel,
                gateIndex);
        cancelAlignment(channel, checkpoint);
    }

    /** A channel aligned on an aborted checkpoint not cancelled yet, -1 if none. */
    private int alignedOnAborted(ChannelProgress progress) {
        long aborted = abortedUpTo;
        if (aborted <= cancelledUpTo) {
            return -1;
        }
        for (int channel = 0; channel < progress.numberOfChannels(); channel++) {
            long checkpoint = progress.alignedCheckpoint(channel);
            if (checkpoint > cancelledUpTo && checkpoint <= aborted) {
                return channel;
            }
        }
        return -1;
    }
}
