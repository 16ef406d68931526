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

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.checkpoint.channel.ChannelStateWriter;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.event.TaskEvent;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;
import org.apache.flink.runtime.io.network.partition.consumer.ClonosChannelProbe;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.io.network.partition.consumer.InputChannel;
import org.apache.flink.runtime.io.network.partition.consumer.SingleInputGate;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
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
 *       then a replacement channel connects to it. The partial record the dead producer left in the
 *       task's deserializer is dropped ({@link #setChannelResetListener}); an alignment the channel
 *       was part of is cancelled, since the new producer's data would otherwise overtake the
 *       barrier.
 *   <li>Every connection starts with a {@link ReplayStartEvent}. A task restored from checkpoint
 *       {@code c} skips what its producers replay from before barrier {@code c}; a replay that
 *       starts after {@code c} cannot be used and fails the task with {@link
 *       LocalRecoveryImpossibleException}.
 *   <li>End of partition and end of data are counted per channel (a retired one never has them).
 * </ul>
 *
 * <p>With causal logging ({@link #enableCausalLogging}) it also, as a consumer, stores the causal
 * logs its producers piggyback, counts the data bytes it received per channel and epoch, and
 * answers every new connection with both ({@link DeterminantResponseEvent}); a producer recovered
 * with them continues its stream exactly where the dead one stopped ({@link ContinuedStreamEvent}),
 * so the partial record is kept. As the input of its own task, it logs the order in which the task
 * reads its channels and, while the task replays, delivers its input in the logged order, byte for
 * byte ({@link InputOrder}).
 *
 * <p>The gate composes one part per concern: {@link ChannelConnections} (which connection serves
 * each channel), {@link ChannelInputFilter} (what of a connection's input the task sees), {@link
 * ChannelProgress} (alignment and ends per channel), {@link CausalConsumer} (the consumer's role in
 * the protocol) and {@link InputOrder} (the logged order of the task's input).
 */
@Internal
public final class ClonosInputGate extends IndexedInputGate {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosInputGate.class);

    /** Nothing was restored: every replay is usable from its start. */
    public static final long NOT_RESTORED = 0;

    private final SingleInputGate original;
    private final String taskName;
    private final int numberOfChannels;
    private final ChannelConnections connections;
    private final ChannelProgress progress;

    /** What of each channel's input reaches the task. */
    private final ChannelInputFilter inputFilter;

    /** Items the gate made itself, handed to the task before anything else. */
    private final GateInjections injected;

    /** What {@link #getAvailableFuture} hands out while nothing is available. */
    private final AvailabilityUnion availability = new AvailabilityUnion();

    /** Hears of broken connections to other TaskManagers; any thread. */
    private volatile Consumer<InetSocketAddress> lostPeerReporter = address -> {};

    /** The TaskManager's Clonos context, which made this gate. */
    private final ClonosNetworkContext context;

    /** Both null without causal logging. */
    @Nullable private CausalConsumer consumer;

    @Nullable private InputOrder order;
    @Nullable private CausalTask causalTask;
    private IntConsumer channelResetListener = channel -> {};
    private ChannelStateWriter channelStateWriter = ChannelStateWriter.NO_OP;

    ClonosInputGate(
            ClonosNetworkContext context,
            SingleInputGate original,
            ReplacementGateFactory replacements,
            Duration reconnectTimeout) {
        this.context = context;
        this.original = original;
        this.taskName = original.getOwningTaskName();
        this.numberOfChannels = original.getNumberOfInputChannels();
        this.progress = new ChannelProgress(taskName, numberOfChannels);
        this.injected = new GateInjections(taskName, original.getGateIndex());
        this.inputFilter =
                new ChannelInputFilter(
                        taskName,
                        numberOfChannels,
                        progress,
                        injected,
                        new ChannelInputFilter.Upstream() {
                            @Override
                            public void resume(int channel) throws IOException {
                                connections.resume(channel);
                            }

                            @Override
                            public void acknowledgeAllRecordsProcessed(int channel)
                                    throws IOException {
                                connections.acknowledgeAllRecordsProcessed(channel);
                            }
                        });
        ResultPartitionID[] producers = new ResultPartitionID[numberOfChannels];
        int[] subpartitions = new int[numberOfChannels];
        for (int i = 0; i < numberOfChannels; i++) {
            producers[i] = original.getChannel(i).getPartitionId();
            subpartitions[i] =
                    original.getChannel(i).getConsumedSubpartitionIndexSet().getStartIndex();
        }
        this.connections =
                new ChannelConnections(
                        original,
                        taskName,
                        producers,
                        subpartitions,
                        (producer, subpartition) ->
                                replacements.connect(
                                        original.getGateIndex(),
                                        producer,
                                        subpartition,
                                        channelStateWriter),
                        ChannelConnections.Probe.FLINK,
                        reconnectTimeout,
                        context.deadlines(),
                        progress::partitionEnded,
                        new ChannelConnections.Listener() {
                            @Override
                            public void retired(int channel) {
                                channelRetired(channel);
                            }

                            @Override
                            public void reconnected(int channel) {
                                inputFilter.reconnected(channel);
                            }

                            @Override
                            public void connectionBroken(InetSocketAddress dataAddress) {
                                lostPeerReporter.accept(dataAddress);
                            }
                        });
    }

    /**
     * Who hears of a broken connection to another TaskManager (the task reports it to the
     * JobManager, {@code LostTaskManagerReport}). Set before the task reads.
     */
    public void setLostPeerReporter(Consumer<InetSocketAddress> reporter) {
        this.lostPeerReporter = reporter;
    }

    /** The checkpoint the owning task was restored from; set before the task reads its input. */
    public void setRestoredCheckpointId(long checkpointId) {
        inputFilter.setRestoredCheckpointId(checkpointId);
    }

    /** The Clonos context of the TaskManager that made this gate. */
    ClonosNetworkContext context() {
        return context;
    }

    /**
     * Turns causal logging on for this gate of {@code task}: its channels are numbered from {@code
     * firstChannel} in the task's order determinants, and the task's gates share {@code
     * inProgress}.
     */
    public void enableCausalLogging(CausalTask task, int firstChannel, OrderInProgress inProgress) {
        InputOrder inputOrder =
                new InputOrder(
                        task,
                        taskName,
                        original.getGateIndex(),
                        numberOfChannels,
                        firstChannel,
                        inProgress,
                        new InputOrder.Input() {
                            @Override
                            public Optional<BufferOrEvent> pull()
                                    throws IOException, InterruptedException {
                                return ClonosInputGate.this.pull();
                            }

                            @Override
                            public void delivered(BufferOrEvent boe) {
                                progress.delivered(boe);
                            }

                            @Override
                            public void resetChannel(int channel) {
                                streamStartsAfresh(channel);
                            }
                        });
        CausalConsumer.Producers producers =
                new CausalConsumer.Producers() {
                    @Override
                    public boolean send(int channel, TaskEvent event) throws IOException {
                        return connections.sendToProducer(channel, event);
                    }

                    @Override
                    public int subpartition(int channel) {
                        return connections.subpartition(channel);
                    }
                };
        this.consumer =
                new CausalConsumer(
                        task,
                        taskName,
                        numberOfChannels,
                        inputFilter.restoredCheckpointId(),
                        producers,
                        inputOrder::streamRestarts);
        inputFilter.enableCausalLogging(consumer);
        this.order = inputOrder;
        this.causalTask = task;
    }

    /**
     * The coordinator aborted checkpoint {@code checkpointId}; any thread ({@link GateInjections}).
     */
    public void checkpointAborted(long checkpointId) {
        injected.checkpointAborted(checkpointId);
    }

    /** Checkpoint {@code checkpointId} completed: the logs and counts before it are not needed. */
    public void checkpointCompleted(long checkpointId) {
        if (consumer != null) {
            consumer.truncateBefore(checkpointId);
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
        return connections.producerRestarted(descriptor);
    }

    // ------------------------------------------------------------------------------------------
    //  Reading
    // ------------------------------------------------------------------------------------------

    @Override
    public Optional<BufferOrEvent> pollNext() throws IOException, InterruptedException {
        connections.connectRestartedProducers();
        connections.checkReconnectDeadlines();
        if (causalTask != null) {
            injected.cancelAbortedAlignment(progress, causalTask::choosesFreely);
        }
        if (!injected.isEmpty()) {
            BufferOrEvent next = injected.poll();
            if (order != null) {
                order.injected(next);
            }
            return Optional.of(next);
        }
        if (order != null) {
            // Flink already processes input while it restores the task (its mailbox loop runs
            // until every gate recovered its channel state), before the task's own mailbox loop:
            // choices made from the first input on are determinants
            causalTask.processingStarted();
            causalTask.recovery().checkDeadline();
            consumer.answerWaitingProducers();
            return order.pollNext();
        }
        Optional<BufferOrEvent> next = pull();
        if (next.isPresent()) {
            progress.delivered(next.get());
        }
        return next;
    }

    /** The next item of any channel that the task may see, connection-level events removed. */
    private Optional<BufferOrEvent> pull() throws IOException, InterruptedException {
        while (true) {
            Optional<BufferOrEvent> next = connections.poll();
            if (next.isEmpty() || inputFilter.accept(next.get())) {
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

    /**
     * A channel's producer is gone. An alignment that included the channel is cancelled for this
     * task: the new producer's data would overtake its barrier; while the task replays its input
     * order, only if it is still open when the replay ends ({@link ChannelProgress#producerLost}).
     * What the task holds of the old stream's last record is dropped, unless the causal consumer
     * learns that the new producer continues the stream exactly.
     */
    private void channelRetired(int channel) {
        boolean replaysInOrder =
                causalTask != null
                        && causalTask.logsInputOrder()
                        && causalTask.recovery().isReplaying();
        injected.cancelAlignment(channel, progress.producerLost(channel, replaysInOrder));
        if (replaysInOrder && progress.isAligning(channel)) {
            LOG.info(
                    "{} keeps its alignment on channel {} across the loss of the channel's producer: it replays, and the logged order holds the new producer's data back.",
                    taskName,
                    channel);
            causalTask
                    .recovery()
                    .whenRunning(() -> progress.replayEnded().forEach(injected::cancelAlignment));
        }
        if (consumer != null) {
            consumer.producerLost(channel);
        } else {
            // without causal logging every restarted producer starts its stream afresh
            streamStartsAfresh(channel);
        }
    }

    /**
     * The channel's producer starts its stream afresh: what the task holds of the old stream's last
     * record is dropped. A task that was handed the channel's end of data already reads the new
     * stream to its own end, if it can ({@link ChannelProgress#streamStartsAfresh}); if it cannot,
     * taking it would silently lose the new stream's records, so the task fails and restarts too.
     */
    private void streamStartsAfresh(int channel) {
        if (!progress.streamStartsAfresh(channel)) {
            throw new LocalRecoveryImpossibleException(
                    taskName
                            + " cannot take the stream of the restarted producer of its channel "
                            + channel
                            + ": the producer starts afresh from its restored checkpoint, but the task read the end of all its input already, and Flink, which finished the task's operators, would drop the new records");
        }
        channelResetListener.accept(channel);
    }

    // ------------------------------------------------------------------------------------------
    //  The rest of the gate
    // ------------------------------------------------------------------------------------------

    @Override
    public CompletableFuture<?> getAvailableFuture() {
        if (!injected.isEmpty() || connections.hasRestartedProducers()) {
            return AVAILABLE;
        }
        // the future first, then the check: a change in between completes the future, instead
        // of being missed by a future asked for after it
        CompletableFuture<?> recoveryChanged =
                causalTask == null ? null : causalTask.recovery().changed();
        CompletableFuture<?> abortArrived = injected.abortArrived();
        if (causalTask != null && canDeliver()) {
            return AVAILABLE;
        }
        List<CompletableFuture<?>> futures = connections.availableFutures();
        if (recoveryChanged != null) {
            futures.add(recoveryChanged);
            futures.add(abortArrived);
        }
        for (CompletableFuture<?> future : futures) {
            if (future.isDone()) {
                return AVAILABLE;
            }
        }
        return availability.of(futures);
    }

    /** With causal logging: whether the next poll hands out something the task may take now. */
    private boolean canDeliver() {
        if (causalTask.recovery().isWaiting()) {
            return false;
        }
        // producers that wait for this task's answer get it on the next poll
        return consumer.hasUnanswered()
                || order.canDeliver()
                || (injected.hasAbortedAlignment(progress) && causalTask.choosesFreely());
    }

    @Override
    public CompletableFuture<?> getPriorityEventAvailableFuture() {
        return original.getPriorityEventAvailableFuture();
    }

    @Override
    public void resumeConsumption(InputChannelInfo channelInfo) throws IOException {
        int channel = channelInfo.getInputChannelIdx();
        if (!progress.isAligning(channel) && !connections.isOriginal(channel)) {
            // resumes a barrier of a connection that was replaced since: nothing is blocked
            return;
        }
        if (progress.alignmentResumed(channel)) {
            connections.resume(channel);
        }
    }

    @Override
    public void acknowledgeAllRecordsProcessed(InputChannelInfo channelInfo) throws IOException {
        connections.acknowledgeAllRecordsProcessed(channelInfo.getInputChannelIdx());
    }

    @Override
    public int getNumberOfInputChannels() {
        return numberOfChannels;
    }

    @Override
    public InputChannel getChannel(int channelIndex) {
        return connections.channel(channelIndex);
    }

    @Override
    public int getGateIndex() {
        return original.getGateIndex();
    }

    @Override
    public List<InputChannelInfo> getUnfinishedChannels() {
        return progress.unfinishedChannels(original.getGateIndex());
    }

    @Override
    public void triggerDebloating() {
        original.triggerDebloating();
    }

    @Override
    public boolean isFinished() {
        return progress.isFinished();
    }

    @Override
    public EndOfDataStatus hasReceivedEndOfData() {
        return progress.endOfDataStatus();
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
        ClonosChannelProbe.requestChannelsLeftOut(original);
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
        connections.close();
        original.close();
    }

    @Override
    public String toString() {
        return "ClonosInputGate{" + original + '}';
    }
}
