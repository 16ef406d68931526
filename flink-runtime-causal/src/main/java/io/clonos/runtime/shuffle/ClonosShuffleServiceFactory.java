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

import io.clonos.runtime.configuration.ClonosConfiguration;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.NettyShuffleServiceFactory;
import org.apache.flink.runtime.io.network.partition.ResultPartition;
import org.apache.flink.runtime.io.network.partition.consumer.SingleInputGate;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleEnvironment;
import org.apache.flink.runtime.shuffle.ShuffleEnvironmentContext;
import org.apache.flink.runtime.shuffle.ShuffleMaster;
import org.apache.flink.runtime.shuffle.ShuffleMasterContext;
import org.apache.flink.runtime.shuffle.ShuffleServiceFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shuffle service of a Clonos cluster, installed through Flink's {@code
 * shuffle-service-factory.class}. It is where the network side of Clonos (in-flight log,
 * piggybacked determinants, reconnection of a recovered task) enters the TaskManager. It keeps
 * Flink's Netty shuffle descriptors, because Flink's input gate factory and partition updates
 * insist on them, and it validates the Clonos settings when a TaskManager starts so that a bad
 * value stops the TaskManager rather than its first task.
 */
@Internal
public class ClonosShuffleServiceFactory
        implements ShuffleServiceFactory<NettyShuffleDescriptor, ResultPartition, SingleInputGate> {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosShuffleServiceFactory.class);

    private final NettyShuffleServiceFactory netty = new NettyShuffleServiceFactory();

    @Override
    public ShuffleMaster<NettyShuffleDescriptor> createShuffleMaster(ShuffleMasterContext context) {
        ClonosConfiguration.fromConfiguration(context.getConfiguration());
        return netty.createShuffleMaster(context);
    }

    @Override
    public ShuffleEnvironment<ResultPartition, SingleInputGate> createShuffleEnvironment(
            ShuffleEnvironmentContext context) {
        ClonosConfiguration clonos = ClonosConfiguration.fromConfiguration(context.getConfiguration());
        LOG.info("Starting the Clonos shuffle environment of {} with {}.", context.getTaskExecutorResourceId(), clonos);
        return netty.createShuffleEnvironment(context);
    }
}
