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
import io.clonos.runtime.causal.Determinant;
import io.clonos.runtime.causal.LocalRecoveryImpossibleException;

import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.event.RuntimeEvent;
import org.apache.flink.runtime.io.network.api.CancelCheckpointMarker;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;
import org.apache.flink.runtime.io.network.partition.consumer.EndOfChannelStateEvent;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The order in which a task reads the channels of one gate, a nondeterministic choice of Flink's
 * (whichever channel has data first): logged while the task runs ({@link Determinant.Order}, one
 * per buffer or event, with its bytes), and reproduced while it replays. During a replay the gate
 * hands out its input in the logged order, exactly the logged number of bytes at a time (a buffer
 * the predecessor read only part of is split); what arrives out of turn waits in a queue per
 * channel. An alignment the gate cancelled on its own (a producer lost after its barrier) is logged
 * as well ({@link Determinant.AlignmentCancelled}) and cancelled at the same point.
 *
 * <p>Task thread only.
 */
@Internal
final class InputOrder {

    private static final Logger LOG = LoggerFactory.getLogger(InputOrder.class);

    private static final int ANY = -1;
    private static final int NOT_MINE = -2;

    /** The gate's input as the order reads it. */
    interface Input {
        /** The next item of any channel the task may see, connection-level events removed. */
        Optional<BufferOrEvent> pull() throws IOException, InterruptedException;

        /** The task is handed {@code boe}. */
        void delivered(BufferOrEvent boe);

        /** What the task holds of the channel's last, partial record must be dropped. */
        void resetChannel(int channel);
    }

    private final CausalTask task;
    private final String taskName;
    private final int gateIndex;
    private final int numberOfChannels;

    /** The number of the gate's first channel in the task's order determinants. */
    private final int firstChannel;

    private final Input input;

    private final List<ArrayDeque<BufferOrEvent>> queued = new ArrayList<>();
    private int queuedItems;

    /** Shared by the task's gates. */
    private final OrderInProgress inProgress;

    private int nextQueue;

    InputOrder(
            CausalTask task,
            String taskName,
            int gateIndex,
            int numberOfChannels,
            int firstChannel,
            OrderInProgress inProgress,
            Input input) {
        this.task = task;
        this.inProgress = inProgress;
        this.taskName = taskName;
        this.gateIndex = gateIndex;
        this.numberOfChannels = numberOfChannels;
        this.firstChannel = firstChannel;
        this.input = input;
        for (int i = 0; i < numberOfChannels; i++) {
            queued.add(new ArrayDeque<>());
        }
    }

    /**
     * The channel's producer restarted with a stream that does not continue the old one: where the
     * new stream starts, what the task holds of the old stream's last record is dropped.
     */
    void streamRestarts(int channel) {
        queue(
                new BufferOrEvent(
                        RestartedStreamMarker.INSTANCE, new InputChannelInfo(gateIndex, channel)));
    }

    private void queue(BufferOrEvent boe) {
        queued.get(boe.getChannelInfo().getInputChannelIdx()).add(boe);
        queuedItems++;
    }

    /** Pulls what the input has into the queues; returns an item that must not wait. */
    private Optional<BufferOrEvent> pullIntoQueues(int wanted)
            throws IOException, InterruptedException {
        while (wanted < 0 || queued.get(wanted).isEmpty()) {
            Optional<BufferOrEvent> next = input.pull();
            if (next.isEmpty()) {
                return next;
            }
            if (isHandshake(next.get())) {
                // Flink's start-up handshake, not input: it never waits for the replay
                return next;
            }
            queue(next.get());
        }
        return Optional.empty();
    }

    /**
     * Whether {@link #pollNext} would hand out something now; the task does not wait for
     * determinants.
     */
    boolean canDeliver() {
        if (task.timerDue() || replaysAlignmentCancelled()) {
            return true;
        }
        int channel = turn();
        if (channel >= 0) {
            return !queued.get(channel).isEmpty();
        }
        return channel == ANY && queuedChannel(false) >= 0;
    }

    /**
     * Whether the head of a queue waits for the end of the replay: the barrier (or cancellation) of
     * a checkpoint triggered during the recovery, which the predecessor never saw. Taken now, it
     * would start or cancel an alignment where the predecessor had none and put the task's output
     * out of step; what follows it on its channel came after the predecessor's failure and is not
     * part of the replay either.
     */
    private boolean heldBack(BufferOrEvent head) {
        if (!head.isEvent() || !task.recovery().isReplaying()) {
            return false;
        }
        long checkpoint = ChannelProgress.checkpointOf(head.getEvent());
        return checkpoint > task.recovery().lastReplayedEpoch();
    }

    /**
     * Whose turn it is: a channel of this gate, any channel (running normally), or not this gate's.
     */
    private int turn() {
        int channel;
        if (inProgress.isOpen()) {
            channel = ownChannel(inProgress.channel());
        } else if (!task.recovery().isReplaying() || !task.logsInputOrder()) {
            return ANY;
        } else {
            Determinant.Order next = task.recovery().peek(Determinant.Order.class);
            if (next == null) {
                return NOT_MINE;
            }
            channel = ownChannel(next.channel());
        }
        return channel >= 0 ? channel : NOT_MINE;
    }

    /** The next item for the task, in the logged order while it replays. */
    Optional<BufferOrEvent> pollNext() throws IOException, InterruptedException {
        if (task.recovery().isWaiting()) {
            return pullIntoQueues(ANY);
        }
        while (true) {
            task.fireDueTimers();
            Optional<BufferOrEvent> cancelled = replayAlignmentCancelled();
            if (cancelled.isPresent()) {
                return cancelled;
            }
            int channel = turn();
            if (channel == NOT_MINE) {
                return pullIntoQueues(ANY);
            }
            if (channel == ANY) {
                channel = queuedChannel(true);
                if (channel < 0) {
                    Optional<BufferOrEvent> next = input.pull();
                    if (next.isEmpty() || isHandshake(next.get())) {
                        return next;
                    }
                    queue(next.get());
                    continue;
                }
            } else if (queued.get(channel).isEmpty()) {
                Optional<BufferOrEvent> urgent = pullIntoQueues(channel);
                if (urgent.isPresent() || queued.get(channel).isEmpty()) {
                    return urgent;
                }
            }
            BufferOrEvent next = take(channel);
            if (next != null) {
                input.delivered(next);
                return Optional.of(next);
            }
        }
    }

    /**
     * The gate cancelled an alignment on its own (a producer was lost after its barrier, or the
     * coordinator aborted the checkpoint, {@link GateInjections}): the log says where, so that a
     * recovered task cancels it at the same point of its input. Only while running normally; a
     * cancellation during a replay is delivered unlogged, as it was before the log kept them.
     */
    void injected(BufferOrEvent boe) {
        if (boe.isEvent()
                && boe.getEvent() instanceof CancelCheckpointMarker marker
                && task.logsInputOrder()
                && task.recovery().isRunning()) {
            int channel = boe.getChannelInfo().getInputChannelIdx();
            task.logged(
                    new Determinant.AlignmentCancelled(
                            firstChannel + channel, marker.getCheckpointId()));
        }
    }

    /** Whether the replay is at an alignment its predecessor cancelled on this gate. */
    private boolean replaysAlignmentCancelled() {
        if (inProgress.isOpen() || !task.recovery().isReplaying() || !task.logsInputOrder()) {
            return false;
        }
        Determinant.AlignmentCancelled next =
                task.recovery().peek(Determinant.AlignmentCancelled.class);
        return next != null && ownChannel(next.channel()) >= 0;
    }

    /** This gate's index of a channel numbered in the task's input order, -1 if another gate's. */
    private int ownChannel(int taskChannel) {
        int channel = taskChannel - firstChannel;
        return channel >= 0 && channel < numberOfChannels ? channel : -1;
    }

    /** While replaying: the alignment its predecessor cancelled at this point, if this gate's. */
    private Optional<BufferOrEvent> replayAlignmentCancelled() {
        if (!replaysAlignmentCancelled()) {
            return Optional.empty();
        }
        Determinant.AlignmentCancelled next =
                task.recovery().next(Determinant.AlignmentCancelled.class);
        int channel = ownChannel(next.channel());
        task.logged(next);
        LOG.info(
                "{} cancels its alignment of checkpoint {} on channel {}, where its predecessor cancelled it.",
                taskName,
                next.checkpointId(),
                channel);
        return Optional.of(GateInjections.cancellation(gateIndex, channel, next.checkpointId()));
    }

    private static boolean isHandshake(BufferOrEvent boe) {
        return boe.isEvent() && boe.getEvent() instanceof EndOfChannelStateEvent;
    }

    /** A channel whose queue has something to hand out now, in turn; -1 if none. */
    private int queuedChannel(boolean advance) {
        if (queuedItems == 0) {
            return -1;
        }
        for (int i = 0; i < numberOfChannels; i++) {
            int channel = (nextQueue + i) % numberOfChannels;
            if (!queued.get(channel).isEmpty() && !heldBack(queued.get(channel).peek())) {
                if (advance) {
                    nextQueue = (channel + 1) % numberOfChannels;
                }
                return channel;
            }
        }
        return -1;
    }

    /**
     * Hands out the head of a channel's queue, as much of it as the order allows, and logs it; null
     * when the head was internal (the caller looks again).
     */
    @Nullable
    private BufferOrEvent take(int channel) {
        ArrayDeque<BufferOrEvent> queue = queued.get(channel);
        BufferOrEvent head = queue.peek();
        if (head.isEvent() && head.getEvent() == RestartedStreamMarker.INSTANCE) {
            remove(queue);
            input.resetChannel(channel);
            return null;
        }
        if (!inProgress.isOpen()) {
            Determinant.Order order =
                    task.recovery().isReplaying() && task.logsInputOrder()
                            ? task.recovery().next(Determinant.Order.class)
                            : null;
            if (order == null) {
                // running normally: the task takes what is there, and the log says so
                remove(queue);
                if (head.isEvent() && LOG.isDebugEnabled()) {
                    LOG.debug("{} reads {} on its channel {}.", taskName, head.getEvent(), channel);
                }
                if (task.logsInputOrder()) {
                    task.logged(
                            new Determinant.Order(
                                    firstChannel + channel,
                                    head.isBuffer() ? head.getBuffer().readableBytes() : 0));
                }
                return head;
            }
            task.logged(order);
            if (LOG.isDebugEnabled()) {
                LOG.debug(
                        "{} replays {} on its channel {}; the channel's next is {} ({} bytes).",
                        taskName,
                        order,
                        channel,
                        head.isBuffer() ? "data" : head.getEvent(),
                        head.isBuffer() ? head.getBuffer().readableBytes() : 0);
            }
            if (order.isEvent()) {
                if (head.isBuffer()) {
                    throw new LocalRecoveryImpossibleException(
                            taskName
                                    + " replays data on channel "
                                    + channel
                                    + " where its predecessor read an event");
                }
                return remove(queue);
            }
            inProgress.start(firstChannel + channel, order.dataBytes());
        }
        if (!head.isBuffer()) {
            throw new LocalRecoveryImpossibleException(
                    taskName
                            + " replays "
                            + head.getEvent()
                            + " on channel "
                            + channel
                            + " where its predecessor read "
                            + inProgress.bytesLeft()
                            + " more bytes of data");
        }
        Buffer buffer = head.getBuffer();
        int bytes = buffer.readableBytes();
        int due = inProgress.bytesLeft();
        if (bytes <= due) {
            inProgress.delivered(bytes);
            return remove(queue);
        }
        // the predecessor read only the first part of this data: split it; each part is recycled
        // on its own, so the memory is retained once more
        buffer.retainBuffer();
        Buffer first = buffer.readOnlySlice(buffer.getReaderIndex(), due);
        Buffer rest = buffer.readOnlySlice(buffer.getReaderIndex() + due, bytes - due);
        queue.poll();
        queue.addFirst(new BufferOrEvent(rest, head.getChannelInfo()));
        inProgress.delivered(due);
        return new BufferOrEvent(first, head.getChannelInfo());
    }

    private BufferOrEvent remove(ArrayDeque<BufferOrEvent> queue) {
        queuedItems--;
        return queue.poll();
    }

    /**
     * Marks where a restarted producer's fresh stream starts in a channel's queue; never leaves the
     * gate.
     */
    private static final class RestartedStreamMarker extends RuntimeEvent {
        static final RestartedStreamMarker INSTANCE = new RestartedStreamMarker();

        @Override
        public void write(DataOutputView out) {}

        @Override
        public void read(DataInputView in) {}
    }
}
