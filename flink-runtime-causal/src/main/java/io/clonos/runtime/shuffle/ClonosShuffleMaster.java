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

import io.clonos.runtime.network.MarkedShuffleDescriptor;
import io.clonos.runtime.network.MarkedShuffleDescriptor.Mark;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.shuffle.JobShuffleContext;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;
import org.apache.flink.runtime.shuffle.PartitionDescriptor;
import org.apache.flink.runtime.shuffle.PartitionWithMetrics;
import org.apache.flink.runtime.shuffle.ProducerDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleMaster;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshot;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshotContext;
import org.apache.flink.runtime.shuffle.TaskInputsOutputsDescriptor;

import java.time.Duration;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Flink's Netty shuffle master, with the partitions of attempts that start afresh ({@link
 * FreshStarts}) and those of jobs that do not checkpoint marked in their descriptors ({@link
 * MarkedShuffleDescriptor}).
 */
@Internal
public final class ClonosShuffleMaster implements ShuffleMaster<NettyShuffleDescriptor> {

    private final ShuffleMaster<NettyShuffleDescriptor> netty;
    private final FreshStarts freshStarts = new FreshStarts();

    /** The jobs whose partitions have no in-flight log. */
    private final Set<JobID> unloggedJobs = ConcurrentHashMap.newKeySet();

    public ClonosShuffleMaster(ShuffleMaster<NettyShuffleDescriptor> netty) {
        this.netty = netty;
    }

    /** The attempts this JobManager deploys to start afresh. */
    public FreshStarts freshStarts() {
        return freshStarts;
    }

    /**
     * The partitions of {@code job} have no in-flight log: the job does not checkpoint, so nothing
     * would ever truncate one. Called before the job's tasks are deployed.
     */
    public void logNothingOf(JobID job) {
        unloggedJobs.add(job);
    }

    /** A JobManager's shuffle master, which must be Clonos's. */
    public static ClonosShuffleMaster of(ShuffleMaster<?> shuffleMaster) {
        if (!(shuffleMaster instanceof ClonosShuffleMaster)) {
            throw new IllegalStateException(
                    "Clonos's scheduler needs Clonos's shuffle service (shuffle-service-factory.class: "
                            + ClonosShuffleServiceFactory.class.getName()
                            + "); this JobManager runs "
                            + shuffleMaster.getClass().getName());
        }
        return (ClonosShuffleMaster) shuffleMaster;
    }

    @Override
    public CompletableFuture<NettyShuffleDescriptor> registerPartitionWithProducer(
            JobID job, PartitionDescriptor partition, ProducerDescriptor producer) {
        return netty.registerPartitionWithProducer(job, partition, producer)
                .thenApply(
                        descriptor -> MarkedShuffleDescriptor.of(descriptor, marks(job, producer)));
    }

    private Set<Mark> marks(JobID job, ProducerDescriptor producer) {
        Set<Mark> marks = EnumSet.noneOf(Mark.class);
        if (freshStarts.isMarked(job, producer.getProducerExecutionId())) {
            marks.add(Mark.FRESH_START);
        }
        if (unloggedJobs.contains(job)) {
            marks.add(Mark.UNLOGGED);
        }
        return marks;
    }

    @Override
    public void start() throws Exception {
        netty.start();
    }

    @Override
    public void close() throws Exception {
        netty.close();
    }

    @Override
    public void registerJob(JobShuffleContext context) {
        netty.registerJob(context);
    }

    @Override
    public void unregisterJob(JobID job) {
        freshStarts.forget(job);
        unloggedJobs.remove(job);
        netty.unregisterJob(job);
    }

    @Override
    public void releasePartitionExternally(ShuffleDescriptor descriptor) {
        netty.releasePartitionExternally(descriptor);
    }

    @Override
    public MemorySize computeShuffleMemorySizeForTask(TaskInputsOutputsDescriptor descriptor) {
        return netty.computeShuffleMemorySizeForTask(descriptor);
    }

    @Override
    public CompletableFuture<Collection<PartitionWithMetrics>> getPartitionWithMetrics(
            JobID job, Duration timeout, Set<ResultPartitionID> expected) {
        return netty.getPartitionWithMetrics(job, timeout, expected);
    }

    @Override
    public boolean supportsBatchSnapshot() {
        return netty.supportsBatchSnapshot();
    }

    @Override
    public void snapshotState(
            CompletableFuture<ShuffleMasterSnapshot> snapshot,
            ShuffleMasterSnapshotContext context) {
        netty.snapshotState(snapshot, context);
    }

    @Override
    public void restoreState(List<ShuffleMasterSnapshot> snapshots) {
        netty.restoreState(snapshots);
    }

    @Override
    public void notifyPartitionRecoveryStarted(JobID job) {
        netty.notifyPartitionRecoveryStarted(job);
    }
}
