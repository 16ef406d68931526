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

package io.clonos.runtime.shuffle;

import io.clonos.runtime.compatibility.FlinkCompatibility;
import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.configuration.ClonosOptions;
import io.clonos.runtime.inflightlog.InFlightLogs;
import io.clonos.runtime.network.ClonosInputGate;
import io.clonos.runtime.network.ClonosNetworkContext;
import io.clonos.runtime.network.ClonosResultPartitionManager;
import io.clonos.runtime.network.ClonosShuffleEnvironment;
import io.clonos.runtime.usercode.UserCodeInstrumentation;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.io.network.ConnectionManager;
import org.apache.flink.runtime.io.network.LocalConnectionManager;
import org.apache.flink.runtime.io.network.NettyShuffleEnvironment;
import org.apache.flink.runtime.io.network.NettyShuffleServiceFactory;
import org.apache.flink.runtime.io.network.TaskEventPublisher;
import org.apache.flink.runtime.io.network.netty.NettyConfig;
import org.apache.flink.runtime.io.network.netty.NettyConnectionManager;
import org.apache.flink.runtime.io.network.partition.ResultPartition;
import org.apache.flink.runtime.io.network.partition.consumer.SingleInputGateFactory;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleEnvironment;
import org.apache.flink.runtime.shuffle.ShuffleEnvironmentContext;
import org.apache.flink.runtime.shuffle.ShuffleMaster;
import org.apache.flink.runtime.shuffle.ShuffleMasterContext;
import org.apache.flink.runtime.shuffle.ShuffleServiceFactory;
import org.apache.flink.runtime.taskmanager.NettyShuffleEnvironmentConfiguration;
import org.apache.flink.util.FlinkRuntimeException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * The shuffle service of a Clonos cluster, installed through Flink's {@code
 * shuffle-service-factory.class}. It is where the network side of Clonos (in-flight log,
 * piggybacked determinants, reconnection of a recovered task) enters the TaskManager. It keeps
 * Flink's Netty shuffle descriptors, because Flink's input gate factory and partition updates
 * insist on them, and it validates the Clonos settings, and that the Flink on the class path is one
 * Clonos's patches fit ({@link FlinkCompatibility}), when a JobManager or a TaskManager starts, so
 * that a bad value or a moved Flink member stops it rather than its first task.
 */
@Internal
public class ClonosShuffleServiceFactory
        implements ShuffleServiceFactory<NettyShuffleDescriptor, ResultPartition, ClonosInputGate> {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosShuffleServiceFactory.class);

    private final NettyShuffleServiceFactory netty = new NettyShuffleServiceFactory();

    @Override
    public ShuffleMaster<NettyShuffleDescriptor> createShuffleMaster(ShuffleMasterContext context) {
        FlinkCompatibility.check(ClonosShuffleServiceFactory.class.getClassLoader());
        ClonosConfiguration.fromConfiguration(context.getConfiguration());
        return new ClonosShuffleMaster(netty.createShuffleMaster(context));
    }

    @Override
    public ShuffleEnvironment<ResultPartition, ClonosInputGate> createShuffleEnvironment(
            ShuffleEnvironmentContext context) {
        FlinkCompatibility.check(ClonosShuffleServiceFactory.class.getClassLoader());
        ClonosConfiguration clonos =
                ClonosConfiguration.fromConfiguration(context.getConfiguration());
        LOG.info(
                "Starting the Clonos shuffle environment of {} with {}.",
                context.getTaskExecutorResourceId(),
                clonos);
        if (clonos.isUserCodeCausalCallsEnabled()) {
            // the TaskManager's user code will load through its user-code class loaders
            UserCodeInstrumentation.install();
        }

        NettyShuffleEnvironmentConfiguration networkConfig =
                NettyShuffleEnvironmentConfiguration.fromConfiguration(
                        context.getConfiguration(),
                        context.getNetworkMemorySize(),
                        context.isLocalCommunicationOnly(),
                        context.getHostAddress());
        ClonosNetworkContext clonosContext =
                new ClonosNetworkContext(
                        "TaskManager " + context.getTaskExecutorResourceId(),
                        clonos.getReconnectTimeout());
        InFlightLogs inFlightLogs;
        try {
            inFlightLogs =
                    InFlightLogs.create(
                            clonos,
                            context.getTmpDirPaths(),
                            context.getNetworkMemorySize().getBytes());
        } catch (IOException e) {
            throw new FlinkRuntimeException(
                    "Cannot create the in-flight log directory under io.tmp.dirs "
                            + String.join(", ", context.getTmpDirPaths()),
                    e);
        }
        if (inFlightLogs.canBeFull()) {
            clonosContext.subpartitionLogs().holdBackFullLogs();
        }
        ClonosResultPartitionManager partitionManager =
                new ClonosResultPartitionManager(
                        clonosContext,
                        inFlightLogs,
                        networkConfig.getPartitionRequestListenerTimeout(),
                        context.getScheduledExecutor());
        // consumers' answers to a recovering producer must not be lost before it subscribes
        TaskEventPublisher events =
                clonosContext.causalTasks().routingAnswers(context.getEventPublisher());
        NettyConfig nettyConfig = networkConfig.nettyConfig();
        ConnectionManager connectionManager =
                nettyConfig == null
                        ? new LocalConnectionManager()
                        : new NettyConnectionManager(
                                partitionManager,
                                events,
                                nettyConfig,
                                networkConfig.getMaxNumberOfConnections(),
                                networkConfig.isConnectionReuseEnabled());
        NettyShuffleEnvironment netty =
                NettyShuffleServiceFactory.createNettyShuffleEnvironment(
                        networkConfig,
                        context.getTaskExecutorResourceId(),
                        events,
                        partitionManager,
                        connectionManager,
                        context.getParentMetricGroup(),
                        context.getIoExecutor(),
                        context.getNumberOfSlots(),
                        context.getTmpDirPaths());
        SingleInputGateFactory gateFactory =
                new SingleInputGateFactory(
                        context.getTaskExecutorResourceId(),
                        networkConfig,
                        connectionManager,
                        partitionManager,
                        events,
                        netty.getNetworkBufferPool(),
                        null,
                        null);
        return new ClonosShuffleEnvironment(
                clonosContext, netty, gateFactory, clonosContext.reconnectTimeout(), inFlightLogs);
    }

    /**
     * The Clonos context of the TaskManager that runs a Clonos task, found through the task's gates
     * and partitions. A task with neither has nothing in it and gets one of its own.
     *
     * @throws IllegalStateException if the TaskManager does not run this shuffle service
     */
    public static ClonosNetworkContext networkOf(Environment environment) {
        String taskName = environment.getTaskInfo().getTaskNameWithSubtasks();
        if (environment.getAllInputGates().length == 0 && environment.getAllWriters().length == 0) {
            return new ClonosNetworkContext(
                    taskName,
                    environment
                            .getTaskManagerInfo()
                            .getConfiguration()
                            .get(ClonosOptions.RECOVERY_RECONNECT_TIMEOUT));
        }
        return ClonosNetworkContext.of(environment.getAllInputGates(), environment.getAllWriters())
                .orElseThrow(
                        () ->
                                new IllegalStateException(
                                        taskName
                                                + " is a Clonos task on a TaskManager without Clonos's shuffle service"
                                                + " (shuffle-service-factory.class: "
                                                + ClonosShuffleServiceFactory.class.getName()
                                                + ")"));
    }
}
