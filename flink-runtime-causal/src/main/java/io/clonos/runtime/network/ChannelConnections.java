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

import io.clonos.runtime.causal.LocalRecoveryImpossibleException;
import io.clonos.runtime.causal.RecoveryDeadlines;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.event.TaskEvent;
import org.apache.flink.runtime.io.network.api.EventAnnouncement;
import org.apache.flink.runtime.io.network.netty.exception.RemoteTransportException;
import org.apache.flink.runtime.io.network.netty.exception.TransportException;
import org.apache.flink.runtime.io.network.partition.PartitionNotFoundException;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;
import org.apache.flink.runtime.io.network.partition.consumer.ClonosChannelProbe;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.io.network.partition.consumer.InputChannel;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;
import org.apache.flink.util.ExceptionUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;

/**
 * Which connection serves each channel of a consumer's gate: the one Flink's gate was deployed
 * with, none while the channel's producer is dead, or a one-channel replacement gate to the
 * producer's new attempt. Reads all of them as one input with the channel indexes the task was
 * deployed with.
 *
 * <p>A producer that dies makes Flink's gate throw without saying which channel failed; the
 * channels whose producer is gone are retired ({@link Listener#retired}) and wait until the
 * JobManager announces the producer's new attempt ({@link #producerRestarted}, any thread). A
 * producer that does not come back within the reconnect timeout was not restarted locally: the task
 * fails, and its own restart reconnects it to everything.
 *
 * <p>Everything but {@link #producerRestarted} runs on the task thread.
 */
@Internal
final class ChannelConnections {

    private static final Logger LOG = LoggerFactory.getLogger(ChannelConnections.class);

    /** What the gate does when a channel changes connection. */
    interface Listener {
        /** The channel's producer is gone; nothing it sent is read any more. */
        void retired(int channel);

        /** The channel reads from a new attempt of its producer now. */
        void reconnected(int channel);

        /**
         * The connection to the TaskManager at {@code dataAddress} broke: its process may be gone,
         * which the JobManager should know before the heartbeats tell it.
         */
        default void connectionBroken(InetSocketAddress dataAddress) {}
    }

    /** Connects a channel to a new producer attempt. */
    interface Connector {
        IndexedInputGate connect(NettyShuffleDescriptor producer, int subpartition)
                throws IOException;
    }

    /**
     * How the connections reach into a channel of a gate: Flink's channels, or scripted ones in
     * tests.
     */
    interface Probe {
        /** Why the channel's producer is gone; null while it is there. */
        @Nullable
        Throwable producerFailure(IndexedInputGate gate, int channel);

        void sendTaskEvent(IndexedInputGate gate, int channel, TaskEvent event) throws IOException;

        Probe FLINK =
                new Probe() {
                    @Override
                    public Throwable producerFailure(IndexedInputGate gate, int channel) {
                        return ClonosChannelProbe.producerFailure(gate.getChannel(channel));
                    }

                    @Override
                    public void sendTaskEvent(IndexedInputGate gate, int channel, TaskEvent event)
                            throws IOException {
                        ClonosChannelProbe.sendTaskEvent(gate.getChannel(channel), event);
                    }
                };
    }

    private final IndexedInputGate original;
    private final String taskName;
    private final int numberOfChannels;

    /** Per channel: the subpartition it consumes; the same of every attempt of its producer. */
    private final int[] subpartition;

    private final Connector connector;
    private final Probe probe;
    private final Duration reconnectTimeout;
    private final RecoveryDeadlines deadlines;
    private final IntPredicate partitionEnded;
    private final Listener listener;

    /** Per channel: the gate that serves it now (null while it waits for a new producer). */
    private final IndexedInputGate[] owner;

    /** Per channel: the channel index within its owner. */
    private final int[] ownerChannel;

    /** Per channel: the producer attempt it reads from. */
    private final ResultPartitionID[] producer;

    /**
     * Per channel: System.nanoTime() when it started waiting for a new producer, 0 if it does not.
     */
    private final long[] waitingSince;

    private int waitingChannels;

    private final List<IndexedInputGate> replacementGates = new ArrayList<>();
    private final Queue<NettyShuffleDescriptor> restartedProducers = new ConcurrentLinkedQueue<>();
    private volatile CompletableFuture<?> producerRestartedFuture = new CompletableFuture<>();
    private int nextSource;

    /**
     * @param original Flink's gate, with the channels the task was deployed with
     * @param producers per channel, the producer attempt it was deployed with
     * @param subpartitions per channel, the subpartition it consumes
     * @param partitionEnded whether the task was handed a channel's end of partition: such a
     *     channel is done and never reconnected
     */
    ChannelConnections(
            IndexedInputGate original,
            String taskName,
            ResultPartitionID[] producers,
            int[] subpartitions,
            Connector connector,
            Probe probe,
            Duration reconnectTimeout,
            RecoveryDeadlines deadlines,
            IntPredicate partitionEnded,
            Listener listener) {
        this.original = original;
        this.taskName = taskName;
        this.numberOfChannels = producers.length;
        this.subpartition = subpartitions.clone();
        this.connector = connector;
        this.probe = probe;
        this.reconnectTimeout = reconnectTimeout;
        this.deadlines = deadlines;
        this.partitionEnded = partitionEnded;
        this.listener = listener;
        this.owner = new IndexedInputGate[numberOfChannels];
        this.ownerChannel = new int[numberOfChannels];
        this.producer = producers.clone();
        this.waitingSince = new long[numberOfChannels];
        for (int i = 0; i < numberOfChannels; i++) {
            owner[i] = original;
            ownerChannel[i] = i;
        }
    }

    /**
     * The JobManager announced a new attempt of one of this gate's producers. Called from an RPC
     * thread; the task thread connects to it ({@link #connectRestartedProducers}).
     *
     * @return whether the producer feeds this gate
     */
    boolean producerRestarted(NettyShuffleDescriptor descriptor) {
        for (int i = 0; i < numberOfChannels; i++) {
            if (producer[i]
                    .getPartitionId()
                    .equals(descriptor.getResultPartitionID().getPartitionId())) {
                restartedProducers.add(descriptor);
                producerRestartedFuture.complete(null);
                return true;
            }
        }
        return false;
    }

    boolean hasRestartedProducers() {
        return !restartedProducers.isEmpty();
    }

    /** The subpartition a channel consumes. */
    int subpartition(int channel) {
        return subpartition[channel];
    }

    /** Whether the channel still reads from the connection it was deployed with. */
    boolean isOriginal(int channel) {
        return owner[channel] == original;
    }

    /** The channel's connection now; the original one while the channel waits for a producer. */
    InputChannel channel(int channel) {
        IndexedInputGate gate = owner[channel];
        return gate == null ? original.getChannel(channel) : gate.getChannel(ownerChannel[channel]);
    }

    /**
     * Sends an event to the channel's current producer.
     *
     * @return false if the channel has no producer now
     */
    boolean sendToProducer(int channel, TaskEvent event) throws IOException {
        IndexedInputGate gate = owner[channel];
        if (gate == null) {
            return false;
        }
        try {
            probe.sendTaskEvent(gate, ownerChannel[channel], event);
            return true;
        } catch (IOException | RuntimeException e) {
            return !retireIfProducerGone(channel, e);
        }
    }

    /** Resumes the channel's current connection after a barrier or the end of recovered state. */
    void resume(int channel) throws IOException {
        IndexedInputGate gate = owner[channel];
        if (gate != null) {
            try {
                gate.resumeConsumption(
                        new InputChannelInfo(gate.getGateIndex(), ownerChannel[channel]));
            } catch (IOException | RuntimeException e) {
                retireIfProducerGone(channel, e);
            }
        }
    }

    void acknowledgeAllRecordsProcessed(int channel) throws IOException {
        IndexedInputGate gate = owner[channel];
        if (gate != null) {
            try {
                gate.acknowledgeAllRecordsProcessed(
                        new InputChannelInfo(gate.getGateIndex(), ownerChannel[channel]));
            } catch (IOException | RuntimeException e) {
                retireIfProducerGone(channel, e);
            }
        }
    }

    /**
     * A call on a channel's connection failed. Flink's remote channel throws its producer's failure
     * from every call, not only from a read: a task that resumes or answers a channel whose
     * producer died a moment ago, before the gate read the failure, must not fail for it. Retires
     * the channel if its producer is gone; rethrows {@code failure} if not.
     */
    private boolean retireIfProducerGone(int channel, Exception failure) throws IOException {
        if (!retireIfGone(channel)) {
            if (failure instanceof IOException) {
                throw (IOException) failure;
            }
            throw (RuntimeException) failure;
        }
        LOG.debug(
                "A call on channel {} of {} failed because its producer is gone.",
                channel,
                taskName,
                failure);
        return true;
    }

    // ------------------------------------------------------------------------------------------
    //  Reading
    // ------------------------------------------------------------------------------------------

    /**
     * Polls the original gate and the replacement gates in turn, with channel indexes remapped to
     * the task's. Drops what retired connections still deliver; a poll that fails because a
     * producer is gone retires its channels and returns nothing.
     */
    Optional<BufferOrEvent> poll() throws IOException, InterruptedException {
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
                        LOG.debug(
                                "The replaced connection of a channel of {} failed.", taskName, e);
                        return Optional.empty();
                    }
                    throw e;
                }
                LOG.debug("Reading {} failed because a producer is gone.", taskName, e);
                return Optional.empty();
            }
            if (next.isPresent()) {
                nextSource = (source + 1) % sources;
                LostConnectionRecycler.guard(next.get(), taskName);
                if (!next.get().isBuffer() && next.get().getEvent() instanceof EventAnnouncement) {
                    // a producer's word that a barrier is on its way to a task its full in-flight
                    // log may hold back (LogBackpressure): Flink noted it when it arrived
                    return Optional.empty();
                }
                int gateChannel = next.get().getChannelInfo().getInputChannelIdx();
                int channel =
                        gate == original
                                ? (owner[gateChannel] == original ? gateChannel : -1)
                                : replacedChannelOf(gate);
                if (channel < 0) {
                    // data from a retired channel (its producer is gone): drop it
                    if (next.get().isBuffer()) {
                        next.get().getBuffer().recycleBuffer();
                    }
                    return Optional.empty();
                }
                if (gate != original) {
                    next.get()
                            .setChannelInfo(new InputChannelInfo(original.getGateIndex(), channel));
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

    /** What completes when any connection may have something, or a producer was restarted. */
    List<CompletableFuture<?>> availableFutures() {
        List<CompletableFuture<?>> futures = new ArrayList<>(2 + replacementGates.size());
        futures.add(original.getAvailableFuture());
        futures.add(producerRestartedFuture);
        for (IndexedInputGate gate : replacementGates) {
            futures.add(gate.getAvailableFuture());
        }
        return futures;
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
            any |= retireIfGone(i);
        }
        return any;
    }

    /**
     * Retires a channel whose producer is gone; false if it is there (or the channel is retired or
     * done already).
     *
     * @throws LocalRecoveryImpossibleException if the producer's partition is gone for good
     */
    private boolean retireIfGone(int i) {
        if (owner[i] == null || partitionEnded.test(i)) {
            return false;
        }
        Throwable failure = probe.producerFailure(owner[i], ownerChannel[i]);
        if (failure == null) {
            return false;
        }
        if (LocalRecoveryImpossibleException.isCauseOf(failure)) {
            throw new LocalRecoveryImpossibleException(
                    "Channel " + i + " cannot be replayed", failure);
        }
        if (ExceptionUtils.findThrowable(failure, PartitionNotFoundException.class).isPresent()) {
            // A producer that failed is announced by the JobManager and reconnected; one whose
            // partition is not there at all finished (its partition, and with it the in-flight
            // log, was released) or never came up. No new attempt will come.
            throw new LocalRecoveryImpossibleException(
                    "Channel "
                            + i
                            + " of "
                            + taskName
                            + " cannot be replayed: the partition of its producer "
                            + producer[i]
                            + " is gone (the producer finished, or its partition was released)",
                    failure);
        }
        ExceptionUtils.findThrowable(failure, RemoteTransportException.class)
                .map(TransportException::getAddress)
                .filter(InetSocketAddress.class::isInstance)
                .ifPresent(address -> listener.connectionBroken((InetSocketAddress) address));
        LOG.info(
                "Producer {} of channel {} of {} is gone; waiting for its new attempt.",
                producer[i],
                i,
                taskName,
                failure);
        retire(i);
        return true;
    }

    /** Whether the original connection of a channel that was retired or replaced since failed. */
    private boolean replacedChannelFailed() {
        for (int i = 0; i < numberOfChannels; i++) {
            if (owner[i] != original && probe.producerFailure(original, i) != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * A producer that does not come back in time was not restarted (a network failure, or the
     * JobManager fell back to a global restart): the task fails, and its own recovery reconnects it
     * to every producer.
     */
    void checkReconnectDeadlines() throws IOException {
        if (waitingChannels == 0) {
            return;
        }
        long now = System.nanoTime();
        for (int i = 0; i < numberOfChannels; i++) {
            if (waitingSince[i] != 0 && now - waitingSince[i] >= reconnectTimeout.toNanos()) {
                throw new IOException(
                        "The producer of channel "
                                + i
                                + " of "
                                + taskName
                                + " did not come back within "
                                + reconnectTimeout.toMillis()
                                + " ms (clonos.recovery.reconnect-timeout)");
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
        deadlines.wakeAfter(
                reconnectTimeout.toMillis() + 1, TimeUnit.MILLISECONDS, () -> wake.complete(null));
        if (gate != original && gate != null) {
            replacementGates.remove(gate);
            try {
                gate.close();
            } catch (Exception e) {
                LOG.warn("Could not close the replaced input of channel {}.", channel, e);
            }
        }
        listener.retired(channel);
    }

    /**
     * Connects the channels of the producers the JobManager restarted since the last call. Runs
     * before every buffer the task reads: a restart completes {@link #producerRestartedFuture}
     * after it queued its producer, so until then one volatile read is all, and the queue's code
     * stays out of the compiled per-record loop that Flink's input inlines this into.
     */
    void connectRestartedProducers() throws IOException {
        if (producerRestartedFuture.isDone()) {
            connectQueuedProducers();
        }
    }

    private void connectQueuedProducers() throws IOException {
        NettyShuffleDescriptor descriptor;
        while ((descriptor = restartedProducers.poll()) != null) {
            for (int i = 0; i < numberOfChannels; i++) {
                if (!producer[i]
                                .getPartitionId()
                                .equals(descriptor.getResultPartitionID().getPartitionId())
                        || producer[i].equals(descriptor.getResultPartitionID())
                        || partitionEnded.test(i)) {
                    continue;
                }
                if (owner[i] != null) {
                    LOG.info(
                            "Producer {} of channel {} of {} was restarted.",
                            producer[i],
                            i,
                            taskName);
                    retire(i);
                }
                IndexedInputGate gate = connector.connect(descriptor, subpartition[i]);
                replacementGates.add(gate);
                owner[i] = gate;
                ownerChannel[i] = 0;
                if (waitingSince[i] != 0) {
                    waitingChannels--;
                }
                waitingSince[i] = 0;
                producer[i] = descriptor.getResultPartitionID();
                listener.reconnected(i);
                LOG.info("Channel {} of {} reads from {} now.", i, taskName, producer[i]);
            }
        }
        if (restartedProducers.isEmpty() && producerRestartedFuture.isDone()) {
            producerRestartedFuture = new CompletableFuture<>();
            if (!restartedProducers.isEmpty()) {
                producerRestartedFuture.complete(null);
            }
        }
    }

    /** Closes the replacement gates; the original one is the gate's to close. */
    void close() throws Exception {
        for (IndexedInputGate gate : replacementGates) {
            gate.close();
        }
    }
}
