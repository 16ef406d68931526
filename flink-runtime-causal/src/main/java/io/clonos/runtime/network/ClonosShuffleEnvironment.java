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

import io.clonos.runtime.inflightlog.InFlightLogs;
import io.clonos.runtime.network.MarkedShuffleDescriptor.Mark;

import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.deployment.InputGateDeploymentDescriptor;
import org.apache.flink.runtime.deployment.ResultPartitionDeploymentDescriptor;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.executiongraph.PartitionInfo;
import org.apache.flink.runtime.io.network.NettyShuffleEnvironment;
import org.apache.flink.runtime.io.network.partition.PartitionProducerStateProvider;
import org.apache.flink.runtime.io.network.partition.ResultPartition;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.consumer.SingleInputGate;
import org.apache.flink.runtime.io.network.partition.consumer.SingleInputGateFactory;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleEnvironment;
import org.apache.flink.runtime.shuffle.ShuffleIOOwnerContext;
import org.apache.flink.runtime.shuffle.ShuffleMetrics;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * A TaskManager's network on Clonos: Flink's Netty shuffle environment, built with Clonos's
 * partition manager (in-flight logs, consumers that can be replaced), whose input gates are wrapped
 * in {@link ClonosInputGate}s, and which routes the JobManager's announcement of a restarted
 * producer to the running consumer that must reconnect. Everything else is Flink's.
 */
@Internal
public final class ClonosShuffleEnvironment
        implements ShuffleEnvironment<ResultPartition, ClonosInputGate> {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosShuffleEnvironment.class);

    private final ClonosNetworkContext context;
    private final NettyShuffleEnvironment netty;
    private final SingleInputGateFactory gateFactory;
    private final Duration reconnectTimeout;
    private final InFlightLogs inFlightLogs;

    public ClonosShuffleEnvironment(
            ClonosNetworkContext context,
            NettyShuffleEnvironment netty,
            SingleInputGateFactory gateFactory,
            Duration reconnectTimeout,
            InFlightLogs inFlightLogs) {
        this.inFlightLogs = inFlightLogs;
        this.context = context;
        this.netty = netty;
        this.gateFactory = gateFactory;
        this.reconnectTimeout = reconnectTimeout;
    }

    @Override
    public int start() throws IOException {
        return netty.start();
    }

    @Override
    public ShuffleIOOwnerContext createShuffleIOOwnerContext(
            String ownerName, ExecutionAttemptID executionAttemptID, MetricGroup parentGroup) {
        return netty.createShuffleIOOwnerContext(ownerName, executionAttemptID, parentGroup);
    }

    @Override
    public List<ResultPartition> createResultPartitionWriters(
            ShuffleIOOwnerContext ownerContext,
            List<ResultPartitionDeploymentDescriptor> descriptors) {
        for (ResultPartitionDeploymentDescriptor descriptor : descriptors) {
            ShuffleDescriptor shuffle = descriptor.getShuffleDescriptor();
            if (MarkedShuffleDescriptor.isMarked(shuffle, Mark.FRESH_START)) {
                context.partitionStartsFresh(shuffle.getResultPartitionID());
            }
            if (MarkedShuffleDescriptor.isMarked(shuffle, Mark.UNLOGGED)) {
                context.partitionUnlogged(shuffle.getResultPartitionID());
            }
        }
        return netty.createResultPartitionWriters(ownerContext, descriptors);
    }

    @Override
    public void releasePartitionsLocally(Collection<ResultPartitionID> partitionIds) {
        netty.releasePartitionsLocally(partitionIds);
    }

    @Override
    public Collection<ResultPartitionID> getPartitionsOccupyingLocalResources() {
        return netty.getPartitionsOccupyingLocalResources();
    }

    @Override
    public Optional<ShuffleMetrics> getMetricsIfPartitionOccupyingLocalResource(
            ResultPartitionID partitionId) {
        return netty.getMetricsIfPartitionOccupyingLocalResource(partitionId);
    }

    @Override
    public List<ClonosInputGate> createInputGates(
            ShuffleIOOwnerContext ownerContext,
            PartitionProducerStateProvider producerStateProvider,
            List<InputGateDeploymentDescriptor> descriptors) {
        List<SingleInputGate> gates =
                netty.createInputGates(ownerContext, producerStateProvider, descriptors);
        List<ClonosInputGate> wrapped = new ArrayList<>(gates.size());
        for (int i = 0; i < gates.size(); i++) {
            ClonosInputGate gate =
                    new ClonosInputGate(
                            context,
                            gates.get(i),
                            new ReplacementGateFactory(
                                    gateFactory,
                                    ownerContext,
                                    producerStateProvider,
                                    descriptors.get(i)),
                            reconnectTimeout);
            context.inputGates().register(ownerContext.getExecutionAttemptID(), gate);
            wrapped.add(gate);
        }
        return wrapped;
    }

    /**
     * A producer of this consumer runs again (a new attempt, maybe elsewhere). Runs on an RPC
     * thread, where an unchecked exception would stop the TaskManager: the gate only records the
     * news and its task thread reconnects.
     */
    @Override
    public boolean updatePartitionInfo(ExecutionAttemptID consumerID, PartitionInfo partitionInfo)
            throws IOException, InterruptedException {
        ShuffleDescriptor descriptor = partitionInfo.getShuffleDescriptor();
        if (descriptor instanceof NettyShuffleDescriptor) {
            for (ClonosInputGate gate : context.inputGates().of(consumerID)) {
                if (gate.producerRestarted((NettyShuffleDescriptor) descriptor)) {
                    return true;
                }
            }
        }
        LOG.debug(
                "No Clonos gate of {} reads {}; handing the update to Flink.",
                consumerID,
                partitionInfo.getIntermediateDataSetID());
        return netty.updatePartitionInfo(consumerID, partitionInfo);
    }

    @Override
    public void close() throws Exception {
        try {
            netty.close();
            context.close();
        } finally {
            inFlightLogs.close();
        }
    }
}
