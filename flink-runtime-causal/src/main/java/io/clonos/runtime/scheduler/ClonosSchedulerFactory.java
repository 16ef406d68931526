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
import io.clonos.runtime.jobgraph.VertexReplay;
import io.clonos.runtime.shuffle.ClonosShuffleMaster;
import io.clonos.runtime.standby.StandbyActivations;
import io.clonos.runtime.standby.StandbyVertices;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.time.Time;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RpcOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.failure.FailureEnricher;
import org.apache.flink.runtime.blob.BlobWriter;
import org.apache.flink.runtime.blocklist.BlocklistOperations;
import org.apache.flink.runtime.checkpoint.CheckpointRecoveryFactory;
import org.apache.flink.runtime.checkpoint.CheckpointsCleaner;
import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.concurrent.ComponentMainThreadExecutor;
import org.apache.flink.runtime.executiongraph.JobStatusListener;
import org.apache.flink.runtime.executiongraph.failover.FailoverStrategyFactoryLoader;
import org.apache.flink.runtime.executiongraph.failover.RestartBackoffTimeStrategy;
import org.apache.flink.runtime.executiongraph.failover.RestartBackoffTimeStrategyFactoryLoader;
import org.apache.flink.runtime.io.network.partition.JobMasterPartitionTracker;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobType;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobmaster.ExecutionDeploymentTracker;
import org.apache.flink.runtime.jobmaster.slotpool.PhysicalSlotProviderImpl;
import org.apache.flink.runtime.jobmaster.slotpool.PhysicalSlotRequestBulkCheckerImpl;
import org.apache.flink.runtime.jobmaster.slotpool.PreferredAllocationRequestSlotMatchingStrategy;
import org.apache.flink.runtime.jobmaster.slotpool.SimpleRequestSlotMatchingStrategy;
import org.apache.flink.runtime.jobmaster.slotpool.SlotPool;
import org.apache.flink.runtime.jobmaster.slotpool.SlotPoolService;
import org.apache.flink.runtime.jobmaster.slotpool.SlotPoolServiceFactory;
import org.apache.flink.runtime.metrics.groups.JobManagerJobMetricGroup;
import org.apache.flink.runtime.rpc.FatalErrorHandler;
import org.apache.flink.runtime.scheduler.DefaultExecutionDeployer;
import org.apache.flink.runtime.scheduler.DefaultExecutionGraphFactory;
import org.apache.flink.runtime.scheduler.DefaultExecutionOperations;
import org.apache.flink.runtime.scheduler.ExecutionVertexVersioner;
import org.apache.flink.runtime.scheduler.SchedulerBase;
import org.apache.flink.runtime.scheduler.SchedulerNG;
import org.apache.flink.runtime.scheduler.SchedulerNGFactory;
import org.apache.flink.runtime.scheduler.SlotSharingExecutionSlotAllocatorFactory;
import org.apache.flink.runtime.scheduler.strategy.PipelinedRegionSchedulingStrategy;
import org.apache.flink.runtime.shuffle.ShuffleMaster;
import org.apache.flink.runtime.util.SlotSelectionStrategyUtils;
import org.apache.flink.util.clock.SystemClock;
import org.apache.flink.util.concurrent.ScheduledExecutorServiceAdapter;

import org.slf4j.Logger;

import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

/**
 * Builds a {@link ClonosScheduler} for a streaming job. Flink assembles its default scheduler from
 * package-private parts; this factory assembles the same parts from their public classes, so that
 * Clonos's scheduler is a {@code DefaultScheduler} in every respect but failover.
 */
@Internal
public class ClonosSchedulerFactory implements SchedulerNGFactory {

    private final ClonosConfiguration clonos;

    public ClonosSchedulerFactory(ClonosConfiguration clonos) {
        this.clonos = clonos;
    }

    /** The slot pool the default scheduler uses for a streaming job. */
    public static SlotPoolServiceFactory slotPoolServiceFactory(Configuration configuration) {
        return new ClonosSlotPool.Factory(
                SystemClock.getInstance(),
                Time.fromDuration(configuration.get(RpcOptions.ASK_TIMEOUT_DURATION)),
                Time.fromDuration(configuration.get(JobManagerOptions.SLOT_IDLE_TIMEOUT)),
                Time.fromDuration(configuration.get(JobManagerOptions.SLOT_REQUEST_TIMEOUT)),
                configuration.get(StateRecoveryOptions.LOCAL_RECOVERY)
                        ? PreferredAllocationRequestSlotMatchingStrategy.INSTANCE
                        : SimpleRequestSlotMatchingStrategy.INSTANCE);
    }

    @Override
    public SchedulerNG createInstance(
            Logger log,
            JobGraph jobGraph,
            Executor ioExecutor,
            Configuration jobMasterConfiguration,
            SlotPoolService slotPoolService,
            ScheduledExecutorService futureExecutor,
            ClassLoader userCodeLoader,
            CheckpointRecoveryFactory checkpointRecoveryFactory,
            Time rpcTimeout,
            BlobWriter blobWriter,
            JobManagerJobMetricGroup jobManagerJobMetricGroup,
            Time slotRequestTimeout,
            ShuffleMaster<?> shuffleMaster,
            JobMasterPartitionTracker partitionTracker,
            ExecutionDeploymentTracker executionDeploymentTracker,
            long initializationTimestamp,
            ComponentMainThreadExecutor mainThreadExecutor,
            FatalErrorHandler fatalErrorHandler,
            JobStatusListener jobStatusListener,
            Collection<FailureEnricher> failureEnrichers,
            BlocklistOperations blocklistOperations)
            throws Exception {
        if (isUnlogged(jobGraph)) {
            ClonosShuffleMaster.of(shuffleMaster).logNothingOf(jobGraph.getJobID());
        }
        SlotPool slotPool =
                slotPoolService
                        .castInto(SlotPool.class)
                        .orElseThrow(
                                () ->
                                        new IllegalStateException(
                                                "The Clonos scheduler requires a SlotPool."));

        PhysicalSlotRequestBulkCheckerImpl bulkChecker =
                PhysicalSlotRequestBulkCheckerImpl.createFromSlotPool(
                        slotPool, SystemClock.getInstance());
        StandbyActivations standbyActivations = new StandbyActivations(log, slotPool);
        SlotSharingExecutionSlotAllocatorFactory allocatorFactory =
                new SlotSharingExecutionSlotAllocatorFactory(
                        new StandbyAwareSlotProvider(
                                new PhysicalSlotProviderImpl(
                                        SlotSelectionStrategyUtils.selectSlotSelectionStrategy(
                                                JobType.STREAMING, jobMasterConfiguration),
                                        slotPool),
                                standbyActivations),
                        true,
                        bulkChecker,
                        slotRequestTimeout);

        RestartBackoffTimeStrategy restartBackoffTimeStrategy =
                RestartBackoffTimeStrategyFactoryLoader.createRestartBackoffTimeStrategyFactory(
                                jobGraph.getSerializedExecutionConfig()
                                        .deserializeValue(userCodeLoader)
                                        .getRestartStrategy(),
                                jobGraph.getJobConfiguration(),
                                jobMasterConfiguration,
                                jobGraph.isCheckpointingEnabled())
                        .create();

        Optional<ClonosSlotPool> clonosSlotPool = slotPoolService.castInto(ClonosSlotPool.class);
        LostTaskManagerDetector lostTaskManagers =
                new LostTaskManagerDetector(
                        ioExecutor,
                        mainThreadExecutor,
                        task ->
                                mainThreadExecutor.schedule(
                                        task,
                                        LostTaskManagerDetector.PROBE_AGAIN_AFTER.toMillis(),
                                        TimeUnit.MILLISECONDS),
                        clonosSlotPool
                                .<BiConsumer<ResourceID, Exception>>map(pool -> pool::declareLost)
                                .orElse(slotPool::releaseTaskManager),
                        // without Clonos's slot pool (a test's) no TaskManager counts as gone
                        clonosSlotPool
                                .<Predicate<ResourceID>>map(pool -> pool::isRegistered)
                                .orElse(taskManager -> true),
                        log);
        return new ClonosScheduler(
                clonos,
                standbyActivations,
                lostTaskManagers,
                log,
                jobGraph,
                ioExecutor,
                jobMasterConfiguration,
                bulkChecker::start,
                new ScheduledExecutorServiceAdapter(futureExecutor),
                userCodeLoader,
                new CheckpointsCleaner(
                        jobMasterConfiguration.get(CheckpointingOptions.CLEANER_PARALLEL_MODE)),
                checkpointRecoveryFactory,
                jobManagerJobMetricGroup,
                new StandbysAfterPrimaries(
                        new PipelinedRegionSchedulingStrategy.Factory(),
                        StandbyVertices.standbyVertices(jobGraph),
                        scheduler -> ((ClonosScheduler) scheduler).access()),
                FailoverStrategyFactoryLoader.loadFailoverStrategyFactory(jobMasterConfiguration),
                restartBackoffTimeStrategy,
                new StandbyExecutionOperations(
                        new DefaultExecutionOperations(), standbyActivations),
                new ExecutionVertexVersioner(),
                allocatorFactory,
                initializationTimestamp,
                mainThreadExecutor,
                (jobId, jobStatus, timestamp) -> {
                    slotPool.setIsJobRestarting(jobStatus == JobStatus.RESTARTING);
                    jobStatusListener.jobStatusChanges(jobId, jobStatus, timestamp);
                },
                failureEnrichers,
                new DefaultExecutionGraphFactory(
                        jobMasterConfiguration,
                        userCodeLoader,
                        executionDeploymentTracker,
                        futureExecutor,
                        ioExecutor,
                        rpcTimeout,
                        jobManagerJobMetricGroup,
                        blobWriter,
                        shuffleMaster,
                        partitionTracker),
                shuffleMaster,
                rpcTimeout,
                SchedulerBase.computeVertexParallelismStore(jobGraph),
                new DefaultExecutionDeployer.Factory());
    }

    @Override
    public JobManagerOptions.SchedulerType getSchedulerType() {
        return JobManagerOptions.SchedulerType.Default;
    }

    /**
     * Whether the job's submission found that Clonos logs nothing of it ({@link
     * VertexReplay#whyUnlogged}); a job that does not checkpoint always is, whoever built it.
     */
    private static boolean isUnlogged(JobGraph jobGraph) {
        if (!jobGraph.isCheckpointingEnabled()) {
            return true;
        }
        for (JobVertex vertex : jobGraph.getVertices()) {
            if (VertexReplay.whyUnlogged(vertex.getConfiguration()).isPresent()) {
                return true;
            }
        }
        return false;
    }
}
