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

import io.clonos.runtime.configuration.ClonosConfiguration;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.time.Time;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.failure.FailureEnricher;
import org.apache.flink.runtime.checkpoint.CheckpointRecoveryFactory;
import org.apache.flink.runtime.checkpoint.CheckpointsCleaner;
import org.apache.flink.runtime.concurrent.ComponentMainThreadExecutor;
import org.apache.flink.runtime.executiongraph.JobStatusListener;
import org.apache.flink.runtime.executiongraph.failover.FailoverStrategy;
import org.apache.flink.runtime.executiongraph.failover.RestartBackoffTimeStrategy;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.metrics.groups.JobManagerJobMetricGroup;
import org.apache.flink.runtime.scheduler.DefaultScheduler;
import org.apache.flink.runtime.scheduler.ExecutionDeployer;
import org.apache.flink.runtime.scheduler.ExecutionOperations;
import org.apache.flink.runtime.scheduler.ExecutionSlotAllocatorFactory;
import org.apache.flink.runtime.scheduler.ExecutionVertexVersioner;
import org.apache.flink.runtime.scheduler.ExecutionGraphFactory;
import org.apache.flink.runtime.scheduler.VertexParallelismStore;
import org.apache.flink.runtime.scheduler.strategy.SchedulingStrategyFactory;
import org.apache.flink.runtime.shuffle.ShuffleMaster;
import org.apache.flink.util.concurrent.ScheduledExecutor;

import org.slf4j.Logger;

import java.util.Collection;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * The JobManager's scheduler for a job on Clonos: Flink's default scheduler, whose failover is
 * where Clonos recovers failed tasks locally instead of rolling the whole job back.
 *
 * <p>Local failover is not implemented yet: failures are handled by Flink's configured failover
 * strategy (a global rollback to the last checkpoint for a streaming job with a shuffle), whatever
 * {@code clonos.recovery.mode} says, and the job's log says so when it starts.
 */
@Internal
public class ClonosScheduler extends DefaultScheduler {

    private final ClonosConfiguration clonos;

    ClonosScheduler(
            ClonosConfiguration clonos,
            Logger log,
            JobGraph jobGraph,
            Executor ioExecutor,
            Configuration jobMasterConfiguration,
            Consumer<ComponentMainThreadExecutor> startUpAction,
            ScheduledExecutor delayExecutor,
            ClassLoader userCodeLoader,
            CheckpointsCleaner checkpointsCleaner,
            CheckpointRecoveryFactory checkpointRecoveryFactory,
            JobManagerJobMetricGroup jobManagerJobMetricGroup,
            SchedulingStrategyFactory schedulingStrategyFactory,
            FailoverStrategy.Factory failoverStrategyFactory,
            RestartBackoffTimeStrategy restartBackoffTimeStrategy,
            ExecutionOperations executionOperations,
            ExecutionVertexVersioner executionVertexVersioner,
            ExecutionSlotAllocatorFactory executionSlotAllocatorFactory,
            long initializationTimestamp,
            ComponentMainThreadExecutor mainThreadExecutor,
            JobStatusListener jobStatusListener,
            Collection<FailureEnricher> failureEnrichers,
            ExecutionGraphFactory executionGraphFactory,
            ShuffleMaster<?> shuffleMaster,
            Time rpcTimeout,
            VertexParallelismStore vertexParallelismStore,
            ExecutionDeployer.Factory executionDeployerFactory)
            throws Exception {
        super(
                log,
                jobGraph,
                ioExecutor,
                jobMasterConfiguration,
                startUpAction,
                delayExecutor,
                userCodeLoader,
                checkpointsCleaner,
                checkpointRecoveryFactory,
                jobManagerJobMetricGroup,
                schedulingStrategyFactory,
                failoverStrategyFactory,
                restartBackoffTimeStrategy,
                executionOperations,
                executionVertexVersioner,
                executionSlotAllocatorFactory,
                initializationTimestamp,
                mainThreadExecutor,
                jobStatusListener,
                failureEnrichers,
                executionGraphFactory,
                shuffleMaster,
                rpcTimeout,
                vertexParallelismStore,
                executionDeployerFactory);
        this.clonos = clonos;
        log.info(
                "Scheduling {} ({}) on Clonos with {}. Failures are handled by Flink's failover"
                        + " strategy: local recovery is not available in this version.",
                jobGraph.getName(),
                jobGraph.getJobID(),
                clonos);
    }

    public ClonosConfiguration getClonosConfiguration() {
        return clonos;
    }
}
