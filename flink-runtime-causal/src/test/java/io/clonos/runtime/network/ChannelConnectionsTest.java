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

import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.event.TaskEvent;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.io.network.partition.PartitionNotFoundException;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.jobgraph.IntermediateResultPartitionID;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor.NetworkPartitionConnectionInfo;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.clonos.runtime.network.GateItems.data;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Which connection serves each channel of a gate, as producers die and come back. */
class ChannelConnectionsTest {

    /** The gate's three channels read three different producers, subpartitions 4, 5 and 6. */
    private final ResultPartitionID[] producers = {
        new ResultPartitionID(), new ResultPartitionID(), new ResultPartitionID()
    };

    private final ScriptedGate original = new ScriptedGate(2, 3);

    /** Per (gate, channel): why its producer is gone. */
    private final Map<IndexedInputGate, Map<Integer, Throwable>> failures = new HashMap<>();

    private final List<IndexedInputGate> replacements = new ArrayList<>();
    private final List<Integer> connectedSubpartitions = new ArrayList<>();
    private final List<String> changes = new ArrayList<>();
    private final List<TaskEvent> sent = new ArrayList<>();
    private final BitSet partitionEnded = new BitSet();

    private ChannelConnections connections(Duration reconnectTimeout) {
        return new ChannelConnections(
                original,
                "consumer",
                producers,
                new int[] {4, 5, 6},
                (producer, subpartition) -> {
                    ScriptedGate replacement = new ScriptedGate(2, 1);
                    replacements.add(replacement);
                    connectedSubpartitions.add(subpartition);
                    return replacement;
                },
                new ChannelConnections.Probe() {
                    @Override
                    public Throwable producerFailure(IndexedInputGate gate, int channel) {
                        return failures.getOrDefault(gate, Map.of()).get(channel);
                    }

                    @Override
                    public void sendTaskEvent(IndexedInputGate gate, int channel, TaskEvent event) {
                        sent.add(event);
                    }
                },
                reconnectTimeout,
                new RecoveryDeadlines("test"),
                partitionEnded::get,
                new ChannelConnections.Listener() {
                    @Override
                    public void retired(int channel) {
                        changes.add("retired " + channel);
                    }

                    @Override
                    public void reconnected(int channel) {
                        changes.add("reconnected " + channel);
                    }
                });
    }

    private void producerDies(IndexedInputGate gate, int channel) {
        failures.computeIfAbsent(gate, g -> new HashMap<>())
                .put(channel, new IOException("connection reset by peer"));
        if (gate instanceof ScriptedGate) {
            ((ScriptedGate) gate)
                    .failWith(new IOException("the gate fails without naming the channel"));
        }
    }

    /** The descriptor of a new attempt of the producer of {@code channel}. */
    private NettyShuffleDescriptor newAttemptOf(int channel) {
        IntermediateResultPartitionID partition = producers[channel].getPartitionId();
        return new NettyShuffleDescriptor(
                ResourceID.generate(),
                new NetworkPartitionConnectionInfo(new InetSocketAddress("localhost", 4711), 0),
                new ResultPartitionID(partition, ExecutionAttemptID.randomId()),
                List.of());
    }

    private static int channelOf(Optional<BufferOrEvent> boe) {
        assertThat(boe).isPresent();
        return boe.get().getChannelInfo().getInputChannelIdx();
    }

    @Test
    void aDeadProducersChannelIsRetiredAndReconnectedToItsNewAttempt() throws Exception {
        ChannelConnections connections = connections(Duration.ofMinutes(1));
        original.deliver(data(1, 8));
        assertThat(channelOf(connections.poll())).isEqualTo(1);

        producerDies(original, 1);
        assertThat(connections.poll())
                .as("the failure is the producer's, not the task's")
                .isEmpty();
        assertThat(changes).containsExactly("retired 1");
        assertThat(connections.sendToProducer(1, new ReplayEndEvent(5)))
                .as("nobody to send to")
                .isFalse();

        // what the dead connection still delivers is dropped
        original.deliver(data(1, 8));
        assertThat(connections.poll()).isEmpty();

        assertThat(connections.producerRestarted(newAttemptOf(1))).isTrue();
        assertThat(connections.hasRestartedProducers()).isTrue();
        connections.connectRestartedProducers();
        assertThat(changes).containsExactly("retired 1", "reconnected 1");
        assertThat(connectedSubpartitions).containsExactly(5);
        assertThat(connections.isOriginal(1)).isFalse();
        assertThat(connections.isOriginal(0)).isTrue();

        // the replacement's only channel is the task's channel 1
        ((ScriptedGate) replacements.get(0)).deliver(data(0, 8));
        Optional<BufferOrEvent> next = connections.poll();
        assertThat(channelOf(next)).isEqualTo(1);
        assertThat(next.get().getChannelInfo().getGateIdx()).isEqualTo(2);
        assertThat(connections.sendToProducer(1, new ReplayEndEvent(5))).isTrue();
        assertThat(sent).hasSize(1);

        connections.resume(1);
        connections.acknowledgeAllRecordsProcessed(1);
        assertThat(((ScriptedGate) replacements.get(0)).resumed).containsExactly(0);
        assertThat(((ScriptedGate) replacements.get(0)).acknowledged).containsExactly(0);
        assertThat(original.resumed).isEmpty();
    }

    @Test
    void aProducerRestartedWhileItsChannelStillReadsRetiresTheOldConnectionFirst()
            throws Exception {
        ChannelConnections connections = connections(Duration.ofMinutes(1));
        connections.producerRestarted(newAttemptOf(0));
        connections.connectRestartedProducers();
        assertThat(changes).containsExactly("retired 0", "reconnected 0");

        // and once more: the first replacement is closed
        connections.producerRestarted(newAttemptOf(0));
        connections.connectRestartedProducers();
        assertThat(((ScriptedGate) replacements.get(0)).closed).isTrue();
        assertThat(connectedSubpartitions).containsExactly(4, 4);
    }

    @Test
    void anotherGatesProducerAndAChannelWhosePartitionEndedAreLeftAlone() throws Exception {
        ChannelConnections connections = connections(Duration.ofMinutes(1));
        assertThat(
                        connections.producerRestarted(
                                new NettyShuffleDescriptor(
                                        ResourceID.generate(),
                                        new NetworkPartitionConnectionInfo(
                                                new InetSocketAddress("localhost", 1), 0),
                                        new ResultPartitionID(),
                                        List.of())))
                .isFalse();

        partitionEnded.set(2);
        connections.producerRestarted(newAttemptOf(2));
        connections.connectRestartedProducers();
        assertThat(changes).isEmpty();
        assertThat(replacements).isEmpty();
    }

    @Test
    void aFailureNoChannelExplainsIsTheTasksOwn() {
        ChannelConnections connections = connections(Duration.ofMinutes(1));
        original.failWith(new IOException("the task's own"));
        assertThatThrownBy(connections::poll)
                .isInstanceOf(IOException.class)
                .hasMessage("the task's own");
    }

    @Test
    void aProducerWhosePartitionIsGoneCannotBeReplayed() {
        ChannelConnections connections = connections(Duration.ofMinutes(1));
        failures.computeIfAbsent(original, g -> new HashMap<>())
                .put(0, new PartitionNotFoundException(producers[0]));
        original.failWith(new IOException("partition not found"));
        assertThatThrownBy(connections::poll)
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining(
                        "Channel 0 of consumer cannot be replayed: the partition of its producer");
    }

    @Test
    void aProducerThatDoesNotComeBackInTimeFailsTheTask() throws Exception {
        ChannelConnections connections = connections(Duration.ZERO);
        connections.checkReconnectDeadlines();
        producerDies(original, 0);
        connections.poll();
        assertThatThrownBy(connections::checkReconnectDeadlines)
                .isInstanceOf(IOException.class)
                .hasMessage(
                        "The producer of channel 0 of consumer did not come back within 0 ms (clonos.recovery.reconnect-timeout)");
    }

    @Test
    void aProducerThatComesBackIsNoLongerWaitedFor() throws Exception {
        ChannelConnections connections = connections(Duration.ZERO);
        producerDies(original, 0);
        connections.poll();
        connections.producerRestarted(newAttemptOf(0));
        connections.connectRestartedProducers();
        connections.checkReconnectDeadlines();
        assertThat(changes).containsExactly("retired 0", "reconnected 0");
    }

    @Test
    void resumingAChannelWhoseProducerJustDiedRetiresItInsteadOfFailingTheTask() throws Exception {
        ChannelConnections connections = connections(Duration.ofMinutes(1));
        // the producer of channel 2 died; the gate has not read the failure yet
        failures.computeIfAbsent(original, g -> new HashMap<>())
                .put(2, new IOException("connection unexpectedly closed"));
        original.callFailure = new IOException("connection unexpectedly closed");

        connections.resume(2);
        assertThat(changes).containsExactly("retired 2");
        connections.acknowledgeAllRecordsProcessed(2);
        assertThat(connections.sendToProducer(2, new ReplayEndEvent(5))).isFalse();
        assertThat(changes).as("once").containsExactly("retired 2");
    }

    @Test
    void aFailedCallOnAChannelWhoseProducerIsThereIsTheTasksOwn() {
        ChannelConnections connections = connections(Duration.ofMinutes(1));
        original.callFailure = new IOException("something else");
        assertThatThrownBy(() -> connections.resume(0))
                .isInstanceOf(IOException.class)
                .hasMessage("something else");
        assertThat(changes).isEmpty();
    }
}
