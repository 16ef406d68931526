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
import org.apache.flink.runtime.checkpoint.channel.ChannelStateWriter;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.event.AbstractEvent;
import org.apache.flink.runtime.event.TaskEvent;
import org.apache.flink.runtime.io.network.api.CancelCheckpointMarker;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.api.EndOfData;
import org.apache.flink.runtime.io.network.api.EndOfPartitionEvent;
import org.apache.flink.runtime.io.network.api.StopMode;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;
import org.apache.flink.runtime.io.network.partition.consumer.ClonosChannelProbe;
import org.apache.flink.runtime.io.network.partition.consumer.EndOfChannelStateEvent;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.io.network.partition.consumer.InputChannel;
import org.apache.flink.runtime.io.network.partition.consumer.SingleInputGate;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
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
 */
@Internal
public final class ClonosInputGate extends IndexedInputGate {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosInputGate.class);

    /** Nothing was restored: every replay is usable from its start. */
    public static final long NOT_RESTORED = 0;

    /** Wakes gates whose retired channels reach their reconnect deadline. */
    private static final ScheduledExecutorService DEADLINES =
            Executors.newSingleThreadScheduledExecutor(
                    runnable -> {
                        Thread thread = new Thread(runnable, "clonos-reconnect-deadlines");
                        thread.setDaemon(true);
                        return thread;
                    });

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
    private final StopMode[] endOfData;

    private final List<SingleInputGate> replacementGates = new ArrayList<>();
    private final Queue<BufferOrEvent> injected = new ArrayDeque<>();
    private final Queue<NettyShuffleDescriptor> restartedProducers = new ConcurrentLinkedQueue<>();
    private volatile CompletableFuture<?> producerRestartedFuture = new CompletableFuture<>();

    private volatile long restoredCheckpointId = NOT_RESTORED;
    private IntConsumer channelResetListener = channel -> {};
    private ChannelStateWriter channelStateWriter = ChannelStateWriter.NO_OP;
    private int nextSource;

    ClonosInputGate(SingleInputGate original, ReplacementGateFactory replacements, Duration reconnectTimeout) {
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
        while (true) {
            connectRestartedProducers();
            checkReconnectDeadlines();
            if (!injected.isEmpty()) {
                return Optional.of(injected.poll());
            }
            Optional<BufferOrEvent> next = pollSources();
            if (next.isEmpty()) {
                return next;
            }
            BufferOrEvent boe = next.get();
            if (accept(boe)) {
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

    /** Applies the per-connection filter and tracks per-channel state; false drops the item. */
    private boolean accept(BufferOrEvent boe) throws IOException {
        int channel = boe.getChannelInfo().getInputChannelIdx();
        ConnectionFilter filter = filters[channel];
        if (boe.isEvent() && boe.getEvent() instanceof ReplayStartEvent) {
            long epoch = ((ReplayStartEvent) boe.getEvent()).getEpoch();
            filter.start(epoch, channel);
            if (!filter.replacement && epoch != ReplayStartEvent.FROM_PRODUCER_START) {
                // A restored task waits for every upstream to announce the end of its recovered
                // state before it resumes them all. A producer that kept running announced it long
                // ago, in an epoch its log no longer has: announce it on its behalf.
                injected.add(new BufferOrEvent(EndOfChannelStateEvent.INSTANCE, boe.getChannelInfo()));
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
        if (event instanceof EndOfChannelStateEvent && filter.replacement) {
            // A restarted producer announces the end of its recovered state and waits to be
            // resumed; the running task has nothing to recover from it.
            resumeOwner(channel);
            return false;
        }
        if (event instanceof CheckpointBarrier) {
            alignedBarrier[channel] = ((CheckpointBarrier) event).getId();
        } else if (event instanceof EndOfPartitionEvent) {
            endOfPartition.set(channel);
        } else if (event instanceof EndOfData) {
            endOfData[channel] = ((EndOfData) event).getStopMode();
        }
        return true;
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
                LOG.info("Producer {} of channel {} of {} is gone; waiting for its new attempt.", producer[i], i, original.getOwningTaskName(), failure);
                retire(i);
                any = true;
            }
        }
        return any;
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
        DEADLINES.schedule(() -> wake.complete(null), reconnectTimeout.toMillis() + 1, TimeUnit.MILLISECONDS);
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
        channelResetListener.accept(channel);
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
    //  The rest of the gate
    // ------------------------------------------------------------------------------------------

    @Override
    public CompletableFuture<?> getAvailableFuture() {
        if (!injected.isEmpty() || !restartedProducers.isEmpty()) {
            return AVAILABLE;
        }
        List<CompletableFuture<?>> futures = new ArrayList<>(2 + replacementGates.size());
        futures.add(original.getAvailableFuture());
        futures.add(producerRestartedFuture);
        for (SingleInputGate gate : replacementGates) {
            futures.add(gate.getAvailableFuture());
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
        ClonosInputGates.unregister(this);
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
