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
import io.clonos.runtime.causal.CausalRecovery;
import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.CorruptCausalLogException;
import io.clonos.runtime.causal.Determinant;
import io.clonos.runtime.causal.RecoveryDeadlines;
import io.clonos.runtime.causal.SharedDelta;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.checkpoint.channel.ChannelStateWriter;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.event.AbstractEvent;
import org.apache.flink.runtime.event.TaskEvent;
import org.apache.flink.runtime.io.network.api.CancelCheckpointMarker;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.api.EndOfData;
import org.apache.flink.runtime.io.network.api.EndOfPartitionEvent;
import org.apache.flink.runtime.io.network.api.StopMode;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.partition.PartitionNotFoundException;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;
import org.apache.flink.runtime.io.network.partition.consumer.ClonosChannelProbe;
import org.apache.flink.runtime.io.network.partition.consumer.EndOfChannelStateEvent;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.io.network.partition.consumer.InputChannel;
import org.apache.flink.runtime.io.network.partition.consumer.SingleInputGate;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;
import org.apache.flink.util.ExceptionUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * A consumer's input gate on Clonos: Flink's gate, which keeps the channels it was deployed with,
 * plus one replacement gate per channel whose producer was restarted. The task sees one gate with
 * the channel indexes it was deployed with.
 *
 * <p>What it adds to Flink's gate, all on the task thread:
 *
 * <ul>
 *   <li>A channel whose producer died does not fail the task: the channel is retired and waits
 *       until the JobManager announces the producer's new attempt ({@link #producerRestarted}),
 *       then a replacement channel connects to it. The partial record the dead producer left in
 *       the task's deserializer is dropped ({@link #setChannelResetListener}); an alignment the
 *       channel was part of is cancelled, since the new producer's data would otherwise overtake
 *       the barrier.
 *   <li>Every connection starts with a {@link ReplayStartEvent}. A task restored from checkpoint
 *       {@code c} skips what its producers replay from before barrier {@code c}; a replay that
 *       starts after {@code c} cannot be used and fails the task with {@link
 *       LocalRecoveryImpossibleException}.
 *   <li>End of partition and end of data are counted per channel, since a retired channel never
 *       delivers them through Flink's gate.
 * </ul>
 *
 * <p>With causal logging ({@link #enableCausalLogging}) it also, as a consumer, stores the causal
 * logs its producers piggyback, counts the data bytes it received per channel and epoch, and
 * answers every new connection with both ({@link DeterminantResponseEvent}); a producer recovered
 * with them continues its stream exactly where the dead one stopped ({@link ContinuedStreamEvent}),
 * so the partial record is kept. As the input of its own task, it logs the order in which the task
 * reads its channels and, while the task replays, delivers its input in the logged order, byte for
 * byte ({@link CausalInput}).
 */
@Internal
public final class ClonosInputGate extends IndexedInputGate {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosInputGate.class);

    /** Nothing was restored: every replay is usable from its start. */
    public static final long NOT_RESTORED = 0;

    private final SingleInputGate original;
    private final ReplacementGateFactory replacements;
    private final Duration reconnectTimeout;
    private final int numberOfChannels;

    /** Per channel: the gate that serves it now (null while it waits for a new producer). */
    private final IndexedInputGate[] owner;
    /** Per channel: the channel index within its owner. */
    private final int[] ownerChannel;
    /** Per channel: the producer attempt it reads from. */
    private final ResultPartitionID[] producer;

    private final ConnectionFilter[] filters;
    private final long[] alignedBarrier;
    /** Per channel: System.nanoTime() when it started waiting for a new producer, 0 if it does not. */
    private final long[] waitingSince;
    private int waitingChannels;
    private final BitSet endOfPartition = new BitSet();
    /**
     * Channels whose end of recovered state the task was handed: Flink resumes a restored task's
     * channels once each announced it, and counts a second announcement on a channel as a bug.
     */
    private final BitSet recoveredStateEnded = new BitSet();
    private final StopMode[] endOfData;

    private final List<SingleInputGate> replacementGates = new ArrayList<>();
    private final Queue<BufferOrEvent> injected = new ArrayDeque<>();
    private final Queue<NettyShuffleDescriptor> restartedProducers = new ConcurrentLinkedQueue<>();
    private volatile CompletableFuture<?> producerRestartedFuture = new CompletableFuture<>();

    private volatile long restoredCheckpointId = NOT_RESTORED;

    /** The TaskManager's Clonos context, which made this gate. */
    private final ClonosNetworkContext context;

    /** Null without causal logging. */
    @javax.annotation.Nullable private CausalInput causal;
    private IntConsumer channelResetListener = channel -> {};
    private ChannelStateWriter channelStateWriter = ChannelStateWriter.NO_OP;
    private int nextSource;

    ClonosInputGate(ClonosNetworkContext context, SingleInputGate original, ReplacementGateFactory replacements, Duration reconnectTimeout) {
        this.context = context;
        this.original = original;
        this.replacements = replacements;
        this.reconnectTimeout = reconnectTimeout;
        this.numberOfChannels = original.getNumberOfInputChannels();
        this.owner = new IndexedInputGate[numberOfChannels];
        this.ownerChannel = new int[numberOfChannels];
        this.producer = new ResultPartitionID[numberOfChannels];
        this.filters = new ConnectionFilter[numberOfChannels];
        this.alignedBarrier = new long[numberOfChannels];
        this.waitingSince = new long[numberOfChannels];
        this.endOfData = new StopMode[numberOfChannels];
        for (int i = 0; i < numberOfChannels; i++) {
            owner[i] = original;
            ownerChannel[i] = i;
            producer[i] = original.getChannel(i).getPartitionId();
            filters[i] = new ConnectionFilter(false);
            alignedBarrier[i] = -1;
        }
    }

    /** The checkpoint the owning task was restored from; set before the task reads its input. */
    public void setRestoredCheckpointId(long checkpointId) {
        this.restoredCheckpointId = checkpointId;
    }

    /** The Clonos context of the TaskManager that made this gate. */
    ClonosNetworkContext context() {
        return context;
    }

    /**
     * Turns causal logging on for this gate of task {@code task}, whose channels are numbered from
     * {@code firstChannel} in the task's input order determinants. Called before the task reads.
     */
    public void enableCausalLogging(CausalTask task, int firstChannel) {
        this.causal = new CausalInput(task, firstChannel);
    }

    /** Checkpoint {@code checkpointId} completed: the logs and counts before it are not needed. */
    public void checkpointCompleted(long checkpointId) {
        if (causal != null) {
            causal.truncateBefore(checkpointId);
        }
    }

    /** Called on the task thread when a channel's partial input must be dropped. */
    public void setChannelResetListener(IntConsumer listener) {
        this.channelResetListener = listener;
    }

    /**
     * The JobManager announced a new attempt of one of this gate's producers. Called from an RPC
     * thread; the task thread connects to it.
     *
     * @return whether the producer feeds this gate
     */
    boolean producerRestarted(NettyShuffleDescriptor descriptor) {
        for (int i = 0; i < numberOfChannels; i++) {
            if (producer[i].getPartitionId().equals(descriptor.getResultPartitionID().getPartitionId())) {
                restartedProducers.add(descriptor);
                producerRestartedFuture.complete(null);
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------------------------------
    //  Reading
    // ------------------------------------------------------------------------------------------

    @Override
    public Optional<BufferOrEvent> pollNext() throws IOException, InterruptedException {
        connectRestartedProducers();
        checkReconnectDeadlines();
        if (!injected.isEmpty()) {
            BufferOrEvent next = injected.poll();
            if (causal != null) {
                causal.injected(next);
            }
            return Optional.of(next);
        }
        if (causal != null) {
            return causal.pollNext();
        }
        Optional<BufferOrEvent> next = pull();
        if (next.isPresent()) {
            delivered(next.get());
        }
        return next;
    }

    /** The next item of any channel that the task may see, connection-level events removed. */
    private Optional<BufferOrEvent> pull() throws IOException, InterruptedException {
        while (true) {
            Optional<BufferOrEvent> next = pollSources();
            if (next.isEmpty() || accept(next.get())) {
                return next;
            }
        }
    }

    @Override
    public Optional<BufferOrEvent> getNext() throws IOException, InterruptedException {
        while (true) {
            Optional<BufferOrEvent> next = pollNext();
            if (next.isPresent() || isFinished()) {
                return next;
            }
            try {
                getAvailableFuture().get();
            } catch (ExecutionException e) {
                throw new IOException(e.getCause());
            }
        }
    }

    /** Polls the original gate and the replacement gates in turn; remaps channel indexes. */
    private Optional<BufferOrEvent> pollSources() throws IOException, InterruptedException {
        int sources = 1 + replacementGates.size();
        for (int attempt = 0; attempt < sources; attempt++) {
            int source = (nextSource + attempt) % sources;
            IndexedInputGate gate = source == 0 ? original : replacementGates.get(source - 1);
            Optional<BufferOrEvent> next;
            try {
                next = gate.pollNext();
            } catch (Exception e) {
                if (!retireFailedChannels(e)) {
                    if (gate == original && replacedChannelFailed()) {
                        // the old connection of a channel that reads from a new producer now:
                        // what it throws is of no concern any more
                        LOG.debug("The replaced connection of a channel of {} failed.", original.getOwningTaskName(), e);
                        return Optional.empty();
                    }
                    throw e;
                }
                LOG.debug("Reading {} failed because a producer is gone.", original.getOwningTaskName(), e);
                return Optional.empty();
            }
            if (next.isPresent()) {
                nextSource = (source + 1) % sources;
                int gateChannel = next.get().getChannelInfo().getInputChannelIdx();
                int channel = gate == original ? (owner[gateChannel] == original ? gateChannel : -1) : replacedChannelOf(gate);
                if (channel < 0) {
                    // data from a retired channel (its producer is gone): drop it
                    if (next.get().isBuffer()) {
                        next.get().getBuffer().recycleBuffer();
                    }
                    return Optional.empty();
                }
                if (gate != original) {
                    next.get().setChannelInfo(new InputChannelInfo(original.getGateIndex(), channel));
                }
                return next;
            }
        }
        return Optional.empty();
    }

    private int replacedChannelOf(IndexedInputGate gate) {
        for (int i = 0; i < numberOfChannels; i++) {
            if (owner[i] == gate) {
                return i;
            }
        }
        return -1;
    }

    /** Applies the per-connection filter and handles connection-level events; false drops the item. */
    private boolean accept(BufferOrEvent boe) throws IOException {
        int channel = boe.getChannelInfo().getInputChannelIdx();
        ConnectionFilter filter = filters[channel];
        if (causal != null && !causal.accept(boe, channel)) {
            return false;
        }
        if (boe.isEvent() && boe.getEvent() instanceof ReplayStartEvent) {
            long epoch = ((ReplayStartEvent) boe.getEvent()).getEpoch();
            filter.start(epoch, channel);
            if (!filter.replacement && epoch != ReplayStartEvent.FROM_PRODUCER_START) {
                // A restored task waits for every upstream to announce the end of its recovered
                // state before it resumes them all. A producer that kept running announced it long
                // ago, in an epoch its log no longer has: announce it on its behalf.
                injected.add(new BufferOrEvent(EndOfChannelStateEvent.INSTANCE, boe.getChannelInfo()));
                recoveredStateEnded.set(channel);
            }
            return false;
        }
        if (!filter.passes(boe)) {
            if (boe.isBuffer()) {
                boe.getBuffer().recycleBuffer();
            } else if (blocksUpstream(boe.getEvent())) {
                resumeOwner(channel);
            }
            return false;
        }
        if (boe.isBuffer()) {
            return true;
        }
        AbstractEvent event = boe.getEvent();
        if (event instanceof EndOfData && endOfData[channel] != null) {
            // The channel's data ended already: a replacement producer that regenerated its
            // predecessor's output announces the same end again (Flink's union gate fails on a
            // second one). The task acknowledged the first end to the lost producer; the
            // replacement waits for an acknowledgement of its own before it may finish (Flink's
            // all-data-processed), and the task has read everything of the channel already.
            acknowledgeAllRecordsProcessed(boe.getChannelInfo());
            return false;
        }
        if (event instanceof EndOfChannelStateEvent) {
            return endOfRecoveredState(channel, filter);
        }
        return true;
    }

    /**
     * A producer announces the end of its recovered state and waits to be resumed. The task is
     * handed the first announcement of each channel; a restarted producer's repeats it for a task
     * that counted the channel already, so it is only resumed. Where the channel's first producer
     * died before it announced anything (lost while this task started), its replacement's
     * announcement is the one the task still waits for to resume all its channels; that
     * replacement is resumed at once, since the task's later resumption of a replaced channel
     * does not reach it ({@link #resumeConsumption}).
     */
    private boolean endOfRecoveredState(int channel, ConnectionFilter filter) throws IOException {
        boolean first = !recoveredStateEnded.get(channel);
        recoveredStateEnded.set(channel);
        if (!first || filter.replacement) {
            resumeOwner(channel);
        }
        return first;
    }

    /** Tracks per-channel state of what the task is handed. */
    private void delivered(BufferOrEvent boe) {
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

    private static boolean blocksUpstream(AbstractEvent event) {
        return event instanceof CheckpointBarrier || event instanceof EndOfChannelStateEvent;
    }

    private void resumeOwner(int channel) throws IOException {
        IndexedInputGate gate = owner[channel];
        if (gate != null) {
            gate.resumeConsumption(new InputChannelInfo(gate.getGateIndex(), ownerChannel[channel]));
        }
    }

    // ------------------------------------------------------------------------------------------
    //  Producer failures and restarts
    // ------------------------------------------------------------------------------------------

    /**
     * After a poll threw: retires every channel whose producer is gone. Returns false when no
     * channel explains the exception, which is then the task's own failure.
     */
    private boolean retireFailedChannels(Exception pollFailure) {
        boolean any = false;
        for (int i = 0; i < numberOfChannels; i++) {
            if (owner[i] == null || endOfPartition.get(i)) {
                continue;
            }
            Throwable failure = ClonosChannelProbe.producerFailure(owner[i].getChannel(ownerChannel[i]));
            if (failure != null) {
                if (LocalRecoveryImpossibleException.isCauseOf(failure)) {
                    throw new LocalRecoveryImpossibleException("Channel " + i + " cannot be replayed", failure);
                }
                if (ExceptionUtils.findThrowable(failure, PartitionNotFoundException.class).isPresent()) {
                    // A producer that failed is announced by the JobManager and reconnected; one
                    // whose partition is not there at all finished (its partition, and with it the
                    // in-flight log, was released) or never came up. No new attempt will come.
                    throw new LocalRecoveryImpossibleException(
                            "Channel " + i + " of " + original.getOwningTaskName() + " cannot be replayed: the partition of its producer "
                                    + producer[i] + " is gone (the producer finished, or its partition was released)",
                            failure);
                }
                LOG.info("Producer {} of channel {} of {} is gone; waiting for its new attempt.", producer[i], i, original.getOwningTaskName(), failure);
                retire(i);
                any = true;
            }
        }
        return any;
    }

    /** Whether the original connection of a channel that was retired or replaced since failed. */
    private boolean replacedChannelFailed() {
        for (int i = 0; i < numberOfChannels; i++) {
            if (owner[i] != original && ClonosChannelProbe.producerFailure(original.getChannel(i)) != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * A producer that does not come back in time was not restarted (a network failure, or the
     * JobManager fell back to a global restart): the task fails, and its own recovery reconnects
     * it to every producer.
     */
    private void checkReconnectDeadlines() throws IOException {
        if (waitingChannels == 0) {
            return;
        }
        long now = System.nanoTime();
        for (int i = 0; i < numberOfChannels; i++) {
            if (waitingSince[i] != 0 && now - waitingSince[i] >= reconnectTimeout.toNanos()) {
                throw new IOException("The producer of channel " + i + " of " + original.getOwningTaskName() + " did not come back within " + reconnectTimeout.toMillis() + " ms (clonos.recovery.reconnect-timeout)");
            }
        }
    }

    /** Stops reading a channel from its current producer. */
    private void retire(int channel) {
        IndexedInputGate gate = owner[channel];
        owner[channel] = null;
        if (waitingSince[channel] == 0) {
            waitingChannels++;
        }
        waitingSince[channel] = System.nanoTime();
        CompletableFuture<?> wake = producerRestartedFuture;
        RecoveryDeadlines.wakeAfter(reconnectTimeout.toMillis() + 1, TimeUnit.MILLISECONDS, () -> wake.complete(null));
        if (gate != original && gate != null) {
            replacementGates.remove(gate);
            try {
                gate.close();
            } catch (Exception e) {
                LOG.warn("Could not close the replaced input of channel {}.", channel, e);
            }
        }
        if (alignedBarrier[channel] >= 0) {
            // An alignment that included this channel: the new producer's data would overtake
            // its barrier, so the checkpoint is cancelled for this task.
            injected.add(new BufferOrEvent(new CancelCheckpointMarker(alignedBarrier[channel]), new InputChannelInfo(original.getGateIndex(), channel)));
            alignedBarrier[channel] = -1;
        }
        if (causal != null) {
            causal.producerLost(channel);
        } else {
            channelResetListener.accept(channel);
        }
    }

    private void connectRestartedProducers() throws IOException {
        NettyShuffleDescriptor descriptor;
        while ((descriptor = restartedProducers.poll()) != null) {
            for (int i = 0; i < numberOfChannels; i++) {
                if (!producer[i].getPartitionId().equals(descriptor.getResultPartitionID().getPartitionId())
                        || producer[i].equals(descriptor.getResultPartitionID())
                        || endOfPartition.get(i)) {
                    continue;
                }
                int subpartition = original.getChannel(i).getConsumedSubpartitionIndexSet().getStartIndex();
                if (owner[i] != null) {
                    LOG.info("Producer {} of channel {} of {} was restarted.", producer[i], i, original.getOwningTaskName());
                    retire(i);
                }
                SingleInputGate gate = replacements.connect(original.getGateIndex(), descriptor, subpartition, channelStateWriter);
                replacementGates.add(gate);
                owner[i] = gate;
                ownerChannel[i] = 0;
                if (waitingSince[i] != 0) {
                    waitingChannels--;
                }
                waitingSince[i] = 0;
                producer[i] = descriptor.getResultPartitionID();
                filters[i] = new ConnectionFilter(true);
                LOG.info("Channel {} of {} reads from {} now.", i, original.getOwningTaskName(), producer[i]);
            }
        }
        if (restartedProducers.isEmpty() && producerRestartedFuture.isDone()) {
            producerRestartedFuture = new CompletableFuture<>();
            if (!restartedProducers.isEmpty()) {
                producerRestartedFuture.complete(null);
            }
        }
    }

    /**
     * What a connection lets through. A restored task's first connections skip what the producer
     * replays from before the restored checkpoint's barrier.
     */
    private final class ConnectionFilter {
        final boolean replacement;
        private long skipThroughBarrier = -1;

        ConnectionFilter(boolean replacement) {
            this.replacement = replacement;
        }

        void start(long replayEpoch, int channel) {
            long restored = restoredCheckpointId;
            if (replacement || restored == NOT_RESTORED || replayEpoch == ReplayStartEvent.FROM_PRODUCER_START || replayEpoch == restored) {
                skipThroughBarrier = -1;
            } else if (replayEpoch < restored) {
                skipThroughBarrier = restored;
            } else {
                throw new LocalRecoveryImpossibleException(
                        "Channel " + channel + " of " + original.getOwningTaskName() + " was restored from checkpoint " + restored
                                + " but its producer can replay only from epoch " + replayEpoch);
            }
        }

        boolean passes(BufferOrEvent boe) {
            if (skipThroughBarrier < 0) {
                return true;
            }
            if (boe.isEvent() && boe.getEvent() instanceof CheckpointBarrier) {
                long id = ((CheckpointBarrier) boe.getEvent()).getId();
                if (id == skipThroughBarrier) {
                    skipThroughBarrier = -1;
                } else if (id > skipThroughBarrier) {
                    throw new LocalRecoveryImpossibleException("The replay skipped barrier " + skipThroughBarrier + " (saw " + id + ")");
                }
            }
            return false;
        }
    }

    // ------------------------------------------------------------------------------------------
    //  Causal logging
    // ------------------------------------------------------------------------------------------

    /**
     * The causal side of the gate. As a consumer: holds the logs its producers piggyback and the
     * data bytes received per channel and epoch, and answers each new connection with them. As
     * the task's input: logs the order in which the task reads its channels and, while the task
     * replays, hands out its input in the logged order, exactly the logged number of bytes at a
     * time; what arrives out of turn waits in a queue per channel.
     */
    private final class CausalInput {

        private final CausalTask task;
        private final int firstChannel;
        private final List<Set<CausalLogId>> logsPerChannel = new ArrayList<>();
        private final List<TreeMap<Long, EpochBytes>> receivedPerEpoch = new ArrayList<>();
        private final long[] streamEpoch;
        /** Channels whose producer died and whose next stream may restart at a record boundary. */
        private final BitSet mayRestart = new BitSet();
        /** Channels whose producer waits for this recovering consumer's answer. */
        private final BitSet unanswered = new BitSet();
        private final List<ArrayDeque<BufferOrEvent>> queued = new ArrayList<>();
        private int queuedItems;
        /** The channel a partly delivered order determinant reads from, and how many bytes are left. */
        private int orderChannel = -1;
        private int orderBytesLeft;
        private int nextQueue;
        private volatile long completedCheckpoint;
        private long truncatedBefore;

        CausalInput(CausalTask task, int firstChannel) {
            this.task = task;
            this.firstChannel = firstChannel;
            this.streamEpoch = new long[numberOfChannels];
            for (int i = 0; i < numberOfChannels; i++) {
                logsPerChannel.add(new HashSet<>());
                receivedPerEpoch.add(new TreeMap<>());
                queued.add(new ArrayDeque<>());
                streamEpoch[i] = restoredCheckpointId;
            }
        }

        /** Connection-level handling of what arrives on a channel; false removes it. */
        boolean accept(BufferOrEvent boe, int channel) throws IOException {
            truncateReceived();
            if (boe.isBuffer()) {
                receivedPerEpoch.get(channel).computeIfAbsent(streamEpoch[channel], e -> new EpochBytes()).add(boe.getBuffer());
                if (mayRestart.get(channel)) {
                    // a restarted producer's stream that does not continue the old one
                    mayRestart.clear(channel);
                    queue(new BufferOrEvent(RestartedStreamMarker.INSTANCE, boe.getChannelInfo()));
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
                    LOG.info("Channel {} of {} continues its stream after {} bytes its new producer skipped.", channel, original.getOwningTaskName(), continued.skippedBytes());
                    mayRestart.clear(channel);
                }
                return false;
            }
            if (event instanceof ReplayStartEvent) {
                answer(channel);
            } else if (event instanceof CheckpointBarrier) {
                streamEpoch[channel] = Math.max(streamEpoch[channel], ((CheckpointBarrier) event).getId());
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
                throw new LocalRecoveryImpossibleException("The causal log received on channel " + channel + " of " + original.getOwningTaskName() + " is corrupt", e);
            }
        }

        /**
         * Tells the producer of a new connection what this consumer holds of its and its
         * upstream's logs and what it received from it. A consumer that recovers itself answers
         * once it has its own determinants: they come with the logs of its upstream that its
         * consumers held.
         */
        private void answer(int channel) throws IOException {
            if (task.recovery().isWaiting()) {
                LOG.debug("{} answers the producer of channel {} once it has its own determinants ({}).", original.getOwningTaskName(), channel, task.recovery().state());
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
            int subpartition = original.getChannel(channel).getConsumedSubpartitionIndexSet().getStartIndex();
            IndexedInputGate gate = owner[channel];
            if (gate != null) {
                boolean replays = task.recovery().isReplaying();
                LOG.debug("{} answers the producer of channel {} with {} deltas{}.", original.getOwningTaskName(), channel, deltas.size(), replays ? " (replaying)" : "");
                ClonosChannelProbe.sendTaskEvent(
                        gate.getChannel(ownerChannel[channel]),
                        new DeterminantResponseEvent(subpartition, receivedPerEpoch.get(channel), deltas, replays));
                if (replays) {
                    // task thread: the replay ends on it, after this answer went out
                    task.recovery().whenRunning(() -> replayEnded(channel, subpartition));
                }
            } else {
                // the producer is gone again; its next attempt asks anew
                LOG.info("{} cannot answer the producer of channel {}: it is gone.", original.getOwningTaskName(), channel);
            }
        }

        /** Tells the channel's current producer that this consumer's replay ended. */
        private void replayEnded(int channel, int subpartition) {
            IndexedInputGate gate = owner[channel];
            if (gate == null) {
                return;
            }
            try {
                ClonosChannelProbe.sendTaskEvent(gate.getChannel(ownerChannel[channel]), new ReplayEndEvent(subpartition));
            } catch (IOException e) {
                // the producer is gone again; its next attempt is answered anew
                LOG.info("{} cannot tell the producer of channel {} that its replay ended: {}", original.getOwningTaskName(), channel, e.getMessage());
            }
        }

        private void answerWaitingProducers() throws IOException {
            if (!unanswered.isEmpty() && !task.recovery().isWaiting()) {
                for (int channel = unanswered.nextSetBit(0); channel >= 0; channel = unanswered.nextSetBit(channel + 1)) {
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
        }

        void producerLost(int channel) {
            mayRestart.set(channel);
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
            }
        }

        private void queue(BufferOrEvent boe) {
            queued.get(boe.getChannelInfo().getInputChannelIdx()).add(boe);
            queuedItems++;
        }

        /** Pulls what the sources have into the queues; returns an item that must not wait. */
        private Optional<BufferOrEvent> pullIntoQueues(int wanted) throws IOException, InterruptedException {
            while (wanted < 0 || queued.get(wanted).isEmpty()) {
                Optional<BufferOrEvent> next = pull();
                if (next.isEmpty()) {
                    return next;
                }
                if (next.get().isEvent() && next.get().getEvent() instanceof EndOfChannelStateEvent) {
                    // Flink's start-up handshake, not input: it never waits for the replay
                    return next;
                }
                queue(next.get());
            }
            return Optional.empty();
        }

        /** Whether {@link #pollNext} would hand out something now. */
        boolean canDeliver() {
            CausalRecovery recovery = task.recovery();
            if (recovery.isWaiting()) {
                return false;
            }
            if (!unanswered.isEmpty()) {
                // producers wait for this task's answer, which the next poll sends
                return true;
            }
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
         * Whether the head of a queue waits for the end of the replay: the barrier (or
         * cancellation) of a checkpoint triggered during the recovery, which the predecessor never
         * saw. Taken now, it would start or cancel an alignment where the predecessor had none and
         * put the task's output out of step; what follows it on its channel came after the
         * predecessor's failure and is not part of the replay either.
         */
        private boolean heldBack(BufferOrEvent head) {
            if (!head.isEvent() || !task.recovery().isReplaying()) {
                return false;
            }
            AbstractEvent event = head.getEvent();
            long checkpoint = event instanceof CheckpointBarrier ? ((CheckpointBarrier) event).getId()
                    : event instanceof CancelCheckpointMarker ? ((CancelCheckpointMarker) event).getCheckpointId() : -1;
            return checkpoint > task.recovery().lastReplayedEpoch();
        }

        private static final int ANY = -1;
        private static final int NOT_MINE = -2;

        /** Whose turn it is: a channel of this gate, any channel (running normally), or not this gate's. */
        private int turn() {
            if (orderBytesLeft > 0) {
                return orderChannel;
            }
            if (!task.recovery().isReplaying() || !task.logsInputOrder()) {
                return ANY;
            }
            Determinant.Order next = task.recovery().peek(Determinant.Order.class);
            if (next == null) {
                return NOT_MINE;
            }
            int channel = ownChannel(next.channel());
            return channel >= 0 ? channel : NOT_MINE;
        }

        Optional<BufferOrEvent> pollNext() throws IOException, InterruptedException {
            // Flink already processes input while it restores the task (its mailbox loop runs
            // until every gate recovered its channel state), before the task's own mailbox loop:
            // choices made from the first input on are determinants
            task.processingStarted();
            CausalRecovery recovery = task.recovery();
            recovery.checkDeadline();
            answerWaitingProducers();
            if (recovery.isWaiting()) {
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
                        Optional<BufferOrEvent> next = pull();
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
                    delivered(next);
                    return Optional.of(next);
                }
            }
        }

        /**
         * The gate cancelled an alignment on its own (a producer was lost after its barrier): the
         * log says where, so that a recovered task cancels it at the same point of its input.
         * Only while running normally; a cancellation during a replay is delivered unlogged, as
         * it was before the log kept them.
         */
        void injected(BufferOrEvent boe) {
            if (boe.isEvent() && boe.getEvent() instanceof CancelCheckpointMarker marker
                    && task.logsInputOrder() && task.recovery().isRunning()) {
                int channel = boe.getChannelInfo().getInputChannelIdx();
                task.logged(new Determinant.AlignmentCancelled(firstChannel + channel, marker.getCheckpointId()));
            }
        }

        /** Whether the replay is at an alignment its predecessor cancelled on this gate. */
        private boolean replaysAlignmentCancelled() {
            if (orderBytesLeft > 0 || !task.recovery().isReplaying() || !task.logsInputOrder()) {
                return false;
            }
            Determinant.AlignmentCancelled next = task.recovery().peek(Determinant.AlignmentCancelled.class);
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
            Determinant.AlignmentCancelled next = task.recovery().next(Determinant.AlignmentCancelled.class);
            int channel = ownChannel(next.channel());
            task.logged(next);
            LOG.info("{} cancels its alignment of checkpoint {} on channel {}, where its predecessor lost that channel's producer.",
                    original.getOwningTaskName(), next.checkpointId(), channel);
            return Optional.of(new BufferOrEvent(new CancelCheckpointMarker(next.checkpointId()), new InputChannelInfo(original.getGateIndex(), channel)));
        }

        private boolean isHandshake(BufferOrEvent boe) {
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
         * Hands out the head of a channel's queue, as much of it as the order allows, and logs it;
         * null when the head was internal (the caller looks again).
         */
        @javax.annotation.Nullable
        private BufferOrEvent take(int channel) throws IOException {
            ArrayDeque<BufferOrEvent> queue = queued.get(channel);
            BufferOrEvent head = queue.peek();
            if (head.isEvent() && head.getEvent() == RestartedStreamMarker.INSTANCE) {
                remove(queue);
                channelResetListener.accept(channel);
                return null;
            }
            if (orderBytesLeft == 0) {
                Determinant.Order order = task.recovery().isReplaying() && task.logsInputOrder() ? task.recovery().next(Determinant.Order.class) : null;
                if (order == null) {
                    // running normally: the task takes what is there, and the log says so
                    remove(queue);
                    if (task.logsInputOrder()) {
                        task.logged(new Determinant.Order(firstChannel + channel, head.isBuffer() ? head.getBuffer().readableBytes() : 0));
                    }
                    return head;
                }
                task.logged(order);
                if (LOG.isDebugEnabled()) {
                    LOG.debug("{} replays {} on its channel {}; the channel's next is {} ({} bytes).", original.getOwningTaskName(), order, channel,
                            head.isBuffer() ? "data" : head.getEvent(), head.isBuffer() ? head.getBuffer().readableBytes() : 0);
                }
                if (order.isEvent()) {
                    if (head.isBuffer()) {
                        throw new LocalRecoveryImpossibleException(original.getOwningTaskName() + " replays data on channel " + channel + " where its predecessor read an event");
                    }
                    return remove(queue);
                }
                orderChannel = channel;
                orderBytesLeft = order.dataBytes();
            }
            if (!head.isBuffer()) {
                throw new LocalRecoveryImpossibleException(original.getOwningTaskName() + " replays " + head.getEvent() + " on channel " + channel + " where its predecessor read " + orderBytesLeft + " more bytes of data");
            }
            Buffer buffer = head.getBuffer();
            int bytes = buffer.readableBytes();
            if (bytes <= orderBytesLeft) {
                orderBytesLeft -= bytes;
                return remove(queue);
            }
            // the predecessor read only the first part of this data: split it; each part is
            // recycled on its own, so the memory is retained once more
            buffer.retainBuffer();
            Buffer first = buffer.readOnlySlice(buffer.getReaderIndex(), orderBytesLeft);
            Buffer rest = buffer.readOnlySlice(buffer.getReaderIndex() + orderBytesLeft, bytes - orderBytesLeft);
            queue.poll();
            queue.addFirst(new BufferOrEvent(rest, head.getChannelInfo()));
            orderBytesLeft = 0;
            return new BufferOrEvent(first, head.getChannelInfo());
        }

        private BufferOrEvent remove(ArrayDeque<BufferOrEvent> queue) {
            queuedItems--;
            return queue.poll();
        }
    }

    /** Marks where a restarted producer's fresh stream starts in a channel's queue; never leaves the gate. */
    private static final class RestartedStreamMarker extends org.apache.flink.runtime.event.RuntimeEvent {
        static final RestartedStreamMarker INSTANCE = new RestartedStreamMarker();

        @Override
        public void write(org.apache.flink.core.memory.DataOutputView out) {}

        @Override
        public void read(org.apache.flink.core.memory.DataInputView in) {}
    }

    // ------------------------------------------------------------------------------------------
    //  The rest of the gate
    // ------------------------------------------------------------------------------------------

    @Override
    public CompletableFuture<?> getAvailableFuture() {
        if (!injected.isEmpty() || !restartedProducers.isEmpty()) {
            return AVAILABLE;
        }
        // the future first, then the check: a change in between completes the future, instead
        // of being missed by a future asked for after it
        CompletableFuture<?> recoveryChanged = causal == null ? null : causal.task.recovery().changed();
        if (causal != null && causal.canDeliver()) {
            return AVAILABLE;
        }
        return sourcesAvailable(recoveryChanged);
    }

    private CompletableFuture<?> sourcesAvailable(@javax.annotation.Nullable CompletableFuture<?> orElse) {
        List<CompletableFuture<?>> futures = new ArrayList<>(2 + replacementGates.size());
        futures.add(original.getAvailableFuture());
        futures.add(producerRestartedFuture);
        for (SingleInputGate gate : replacementGates) {
            futures.add(gate.getAvailableFuture());
        }
        if (orElse != null) {
            futures.add(orElse);
        }
        for (CompletableFuture<?> future : futures) {
            if (future.isDone()) {
                return AVAILABLE;
            }
        }
        return CompletableFuture.anyOf(futures.toArray(new CompletableFuture[0]));
    }

    @Override
    public CompletableFuture<?> getPriorityEventAvailableFuture() {
        return original.getPriorityEventAvailableFuture();
    }

    @Override
    public void resumeConsumption(InputChannelInfo channelInfo) throws IOException {
        int channel = channelInfo.getInputChannelIdx();
        if (alignedBarrier[channel] < 0 && owner[channel] != original) {
            // resumes a barrier of a connection that was replaced since: nothing is blocked
            return;
        }
        alignedBarrier[channel] = -1;
        resumeOwner(channel);
    }

    @Override
    public void acknowledgeAllRecordsProcessed(InputChannelInfo channelInfo) throws IOException {
        int channel = channelInfo.getInputChannelIdx();
        IndexedInputGate gate = owner[channel];
        if (gate != null) {
            gate.acknowledgeAllRecordsProcessed(new InputChannelInfo(gate.getGateIndex(), ownerChannel[channel]));
        }
    }

    @Override
    public int getNumberOfInputChannels() {
        return numberOfChannels;
    }

    @Override
    public InputChannel getChannel(int channelIndex) {
        IndexedInputGate gate = owner[channelIndex];
        return gate == null ? original.getChannel(channelIndex) : gate.getChannel(ownerChannel[channelIndex]);
    }

    @Override
    public int getGateIndex() {
        return original.getGateIndex();
    }

    @Override
    public List<InputChannelInfo> getUnfinishedChannels() {
        List<InputChannelInfo> unfinished = new ArrayList<>();
        for (int i = 0; i < numberOfChannels; i++) {
            if (!endOfPartition.get(i)) {
                unfinished.add(new InputChannelInfo(original.getGateIndex(), i));
            }
        }
        return unfinished;
    }

    @Override
    public void triggerDebloating() {
        original.triggerDebloating();
    }

    @Override
    public boolean isFinished() {
        return endOfPartition.cardinality() == numberOfChannels;
    }

    @Override
    public EndOfDataStatus hasReceivedEndOfData() {
        if (Arrays.stream(endOfData).anyMatch(mode -> mode == null)) {
            return EndOfDataStatus.NOT_END_OF_DATA;
        }
        return Arrays.stream(endOfData).allMatch(mode -> mode == StopMode.DRAIN) ? EndOfDataStatus.DRAINED : EndOfDataStatus.STOPPED;
    }

    @Override
    public void setup() throws IOException {
        original.setup();
    }

    @Override
    public CompletableFuture<Void> getStateConsumedFuture() {
        return original.getStateConsumedFuture();
    }

    @Override
    public void requestPartitions() throws IOException {
        original.requestPartitions();
        if (original instanceof SingleInputGate) {
            ClonosChannelProbe.requestChannelsLeftOut((SingleInputGate) original);
        }
    }

    @Override
    public void setChannelStateWriter(ChannelStateWriter channelStateWriter) {
        this.channelStateWriter = channelStateWriter;
        original.setChannelStateWriter(channelStateWriter);
    }

    @Override
    public void sendTaskEvent(TaskEvent event) throws IOException {
        original.sendTaskEvent(event);
    }

    @Override
    public void finishReadRecoveredState() throws IOException {
        original.finishReadRecoveredState();
    }

    @Override
    public void close() throws Exception {
        context.inputGates().unregister(this);
        for (SingleInputGate gate : replacementGates) {
            gate.close();
        }
        original.close();
    }

    @Override
    public String toString() {
        return "ClonosInputGate{" + original + '}';
    }
}
