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

package io.clonos.runtime.scheduler;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.time.Time;
import org.apache.flink.runtime.deployment.TaskDeploymentDescriptorFactory;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.executiongraph.ExecutionVertex;
import org.apache.flink.runtime.executiongraph.IntermediateResultPartition;
import org.apache.flink.runtime.executiongraph.PartitionInfo;
import org.apache.flink.runtime.jobmaster.LogicalSlot;
import org.apache.flink.runtime.scheduler.ExecutionVertexVersion;
import org.apache.flink.runtime.scheduler.ExecutionVertexVersioner;
import org.apache.flink.runtime.scheduler.strategy.ConsumerVertexGroup;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.runtime.shuffle.ShuffleDescriptor;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.function.Function;

/**
 * Tells the running consumers of a restarted producer where its new attempt is, once the attempt
 * has registered its partitions (it is initializing or running). Consumers restarted together with
 * the producer got the location in their deployment and are skipped.
 */
@Internal
final class RestartedProducers {

    private static final Logger LOG = LoggerFactory.getLogger(RestartedProducers.class);

    private RestartedProducers() {}

    /**
     * Once each of the batch's new attempts has started, tells its running consumers outside the
     * batch where it is, unless the attempt was replaced since.
     */
    static void announceOnceStarted(
            List<ExecutionVertexID> started,
            Set<ExecutionVertexID> batch,
            ExecutionVertexVersioner versioner,
            Function<ExecutionVertexID, ExecutionVertex> vertices,
            Executor mainThread,
            Time rpcTimeout) {
        for (ExecutionVertexID id : started) {
            ExecutionVertexVersion version = versioner.getExecutionVertexVersion(id);
            Execution attempt = vertices.apply(id).getCurrentExecutionAttempt();
            attempt.getInitializingOrRunningFuture()
                    .thenRunAsync(
                            () -> {
                                if (!versioner.isModified(version)) {
                                    announce(
                                            attempt,
                                            batch,
                                            v -> vertices.apply(v).getCurrentExecutionAttempt(),
                                            rpcTimeout);
                                }
                            },
                            mainThread);
        }
    }

    static void announce(
            Execution producer,
            Set<ExecutionVertexID> restarted,
            Function<ExecutionVertexID, Execution> currentAttempt,
            Time rpcTimeout) {
        for (IntermediateResultPartition partition :
                producer.getVertex().getProducedPartitions().values()) {
            ShuffleDescriptor location =
                    TaskDeploymentDescriptorFactory.getConsumedPartitionShuffleDescriptor(
                            partition,
                            TaskDeploymentDescriptorFactory.PartitionLocationConstraint
                                    .MUST_BE_KNOWN,
                            false);
            PartitionInfo info =
                    new PartitionInfo(partition.getIntermediateResult().getId(), location);
            for (ConsumerVertexGroup group : partition.getConsumerVertexGroups()) {
                for (ExecutionVertexID consumerId : group) {
                    if (!restarted.contains(consumerId)) {
                        announce(currentAttempt.apply(consumerId), info, rpcTimeout);
                    }
                }
            }
        }
    }

    private static void announce(Execution consumer, PartitionInfo info, Time rpcTimeout) {
        ExecutionState state = consumer.getState();
        LogicalSlot slot = consumer.getAssignedResource();
        if (slot == null
                || (state != ExecutionState.RUNNING
                        && state != ExecutionState.INITIALIZING
                        && state != ExecutionState.DEPLOYING)) {
            return;
        }
        slot.getTaskManagerGateway()
                .updatePartitions(consumer.getAttemptId(), List.of(info), rpcTimeout)
                .whenComplete(
                        (ack, failure) -> {
                            if (failure != null) {
                                LOG.warn(
                                        "Could not tell {} about its restarted producer; failing it.",
                                        consumer,
                                        failure);
                                consumer.fail(failure);
                            }
                        });
    }
}
