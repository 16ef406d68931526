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
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.channel.ChannelStateWriter;
import org.apache.flink.runtime.deployment.InputGateDeploymentDescriptor;
import org.apache.flink.runtime.deployment.TaskDeploymentDescriptorFactory.ShuffleDescriptorAndIndex;
import org.apache.flink.runtime.io.network.metrics.InputChannelMetrics;
import org.apache.flink.runtime.io.network.partition.PartitionProducerStateProvider;
import org.apache.flink.runtime.io.network.partition.consumer.SingleInputGate;
import org.apache.flink.runtime.io.network.partition.consumer.SingleInputGateFactory;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleIOOwnerContext;

import java.io.IOException;

/**
 * Builds the one-channel gate that connects a running consumer to the new attempt of a producer,
 * with Flink's own gate factory, so that the new channel (local or remote, credits, buffers) is set
 * up exactly as Flink sets up channels at deployment.
 */
@Internal
final class ReplacementGateFactory {

    private final SingleInputGateFactory factory;
    private final ShuffleIOOwnerContext owner;
    private final PartitionProducerStateProvider producerStateProvider;
    private final InputGateDeploymentDescriptor original;

    ReplacementGateFactory(
            SingleInputGateFactory factory,
            ShuffleIOOwnerContext owner,
            PartitionProducerStateProvider producerStateProvider,
            InputGateDeploymentDescriptor original) {
        this.factory = factory;
        this.owner = owner;
        this.producerStateProvider = producerStateProvider;
        this.original = original;
    }

    /**
     * A gate, set up and with its partition requested, reading one subpartition of the new
     * producer.
     */
    SingleInputGate connect(
            int gateIndex,
            NettyShuffleDescriptor producer,
            int subpartition,
            ChannelStateWriter channelStateWriter)
            throws IOException {
        InputGateDeploymentDescriptor descriptor =
                new InputGateDeploymentDescriptor(
                        original.getConsumedResultId(),
                        original.getConsumedPartitionType(),
                        subpartition,
                        new ShuffleDescriptorAndIndex[] {
                            new ShuffleDescriptorAndIndex(producer, 0)
                        });
        SingleInputGate gate =
                factory.create(
                        owner,
                        gateIndex,
                        descriptor,
                        producerStateProvider,
                        new InputChannelMetrics(new UnregisteredMetricsGroup()));
        gate.setChannelStateWriter(channelStateWriter);
        gate.setup();
        // A new gate starts with channels that first replay recovered channel state; there is none
        // for a running consumer, so consume the end-of-state marker right away.
        gate.finishReadRecoveredState();
        try {
            while (!gate.getStateConsumedFuture().isDone()) {
                gate.pollNext();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(
                    "Interrupted while connecting to " + producer.getResultPartitionID(), e);
        }
        gate.requestPartitions();
        return gate;
    }
}
