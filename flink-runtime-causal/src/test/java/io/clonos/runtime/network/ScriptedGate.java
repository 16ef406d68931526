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

import org.apache.flink.runtime.checkpoint.channel.ChannelStateWriter;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.event.TaskEvent;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.io.network.partition.consumer.InputChannel;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;

/**
 * An input gate whose channels deliver what the test scripts, in that order; a scripted failure is
 * thrown by the next poll, as Flink's gate throws when a producer dies.
 */
final class ScriptedGate extends IndexedInputGate {

    private final int gateIndex;
    private final int channels;
    private final Queue<Object> script = new ArrayDeque<>();
    final List<Integer> resumed = new ArrayList<>();
    final List<Integer> acknowledged = new ArrayList<>();
    boolean closed;

    /**
     * What resuming or acknowledging a channel throws, as Flink's remote channel throws its
     * producer's failure.
     */
    IOException callFailure;

    ScriptedGate(int gateIndex, int channels) {
        this.gateIndex = gateIndex;
        this.channels = channels;
    }

    ScriptedGate deliver(BufferOrEvent boe) {
        script.add(boe);
        return this;
    }

    ScriptedGate failWith(IOException failure) {
        script.add(failure);
        return this;
    }

    @Override
    public Optional<BufferOrEvent> pollNext() throws IOException {
        Object next = script.poll();
        if (next instanceof IOException) {
            throw (IOException) next;
        }
        if (next == null) {
            return Optional.empty();
        }
        BufferOrEvent boe = (BufferOrEvent) next;
        // as Flink's gate: the channel info names this gate
        boe.setChannelInfo(
                new InputChannelInfo(gateIndex, boe.getChannelInfo().getInputChannelIdx()));
        return Optional.of(boe);
    }

    @Override
    public Optional<BufferOrEvent> getNext() throws IOException {
        return pollNext();
    }

    @Override
    public CompletableFuture<?> getAvailableFuture() {
        return script.isEmpty() ? new CompletableFuture<>() : AVAILABLE;
    }

    @Override
    public void resumeConsumption(InputChannelInfo channelInfo) throws IOException {
        if (callFailure != null) {
            throw callFailure;
        }
        resumed.add(channelInfo.getInputChannelIdx());
    }

    @Override
    public void acknowledgeAllRecordsProcessed(InputChannelInfo channelInfo) throws IOException {
        if (callFailure != null) {
            throw callFailure;
        }
        acknowledged.add(channelInfo.getInputChannelIdx());
    }

    @Override
    public int getNumberOfInputChannels() {
        return channels;
    }

    @Override
    public InputChannel getChannel(int channelIndex) {
        throw new UnsupportedOperationException("a scripted gate has no Flink channels");
    }

    @Override
    public int getGateIndex() {
        return gateIndex;
    }

    @Override
    public List<InputChannelInfo> getUnfinishedChannels() {
        return List.of();
    }

    @Override
    public void triggerDebloating() {}

    @Override
    public boolean isFinished() {
        return false;
    }

    @Override
    public EndOfDataStatus hasReceivedEndOfData() {
        return EndOfDataStatus.NOT_END_OF_DATA;
    }

    @Override
    public void setup() {}

    @Override
    public CompletableFuture<Void> getStateConsumedFuture() {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void requestPartitions() {}

    @Override
    public void setChannelStateWriter(ChannelStateWriter channelStateWriter) {}

    @Override
    public void sendTaskEvent(TaskEvent event) {}

    @Override
    public void finishReadRecoveredState() {}

    @Override
    public CompletableFuture<?> getPriorityEventAvailableFuture() {
        return new CompletableFuture<>();
    }

    @Override
    public void close() {
        closed = true;
    }
}
