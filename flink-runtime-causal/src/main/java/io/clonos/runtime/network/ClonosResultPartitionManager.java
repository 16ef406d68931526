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

import io.clonos.runtime.inflightlog.DisabledInFlightLog;
import io.clonos.runtime.inflightlog.InFlightLogs;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.netty.ClonosConsumerConnectionPatch;
import org.apache.flink.runtime.io.network.partition.BufferAvailabilityListener;
import org.apache.flink.runtime.io.network.partition.PartitionNotFoundException;
import org.apache.flink.runtime.io.network.partition.PartitionRequestListener;
import org.apache.flink.runtime.io.network.partition.ResultPartition;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionManager;
import org.apache.flink.runtime.io.network.partition.ResultSubpartitionIndexSet;
import org.apache.flink.runtime.io.network.partition.ResultSubpartitionView;
import org.apache.flink.util.concurrent.ScheduledExecutor;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.Optional;

/**
 * The TaskManager's registry of produced partitions, through which both the Netty server and local
 * input channels open subpartitions. Every subpartition is opened from Flink once and served
 * through a {@link LoggingSubpartition}, so that it logs what it sends and accepts a new consumer
 * after the old one failed (Flink's pipelined subpartitions can be read once).
 *
 * <p>A request for a partition that is not registered yet fails with Flink's {@code
 * PartitionNotFoundException}, on which the consumer retries; Flink's alternative (parking the
 * request in a listener until the partition appears) would open the subpartition behind our back.
 */
@Internal
public class ClonosResultPartitionManager extends ResultPartitionManager {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosResultPartitionManager.class);

    /** How long a partition request waits on the network thread for its producer to register. */
    private static final Duration REGISTRATION_WAIT = Duration.ofSeconds(2);

    private final ClonosNetworkContext context;
    private final InFlightLogs inFlightLogs;

    /**
     * @param partitionRequestListenerTimeout Flink's {@code
     *     taskmanager.network.partition-request-timeout}: a request for a partition that does not
     *     register within it is answered with {@code PartitionNotFoundException}, as by Flink's own
     *     manager (without it, a request for the partition of a producer that finished would wait
     *     for ever)
     * @param scheduledExecutor checks the requests against that timeout
     */
    public ClonosResultPartitionManager(
            ClonosNetworkContext context,
            InFlightLogs inFlightLogs,
            int partitionRequestListenerTimeout,
            ScheduledExecutor scheduledExecutor) {
        super(partitionRequestListenerTimeout, scheduledExecutor);
        this.context = context;
        this.inFlightLogs = inFlightLogs;
    }

    /** The Clonos context of this TaskManager. */
    public ClonosNetworkContext context() {
        return context;
    }

    @Override
    public void registerResultPartition(ResultPartition partition) throws IOException {
        context.causalTasks().partitionRegistered(partition.getPartitionId());
        super.registerResultPartition(partition);
    }

    @Override
    public ResultSubpartitionView createSubpartitionView(
            ResultPartitionID partitionId,
            ResultSubpartitionIndexSet subpartitionIndexSet,
            BufferAvailabilityListener availabilityListener)
            throws IOException {
        if (subpartitionIndexSet.size() != 1) {
            LOG.warn(
                    "{} requests subpartitions {} at once; they are served without an in-flight log.",
                    partitionId,
                    subpartitionIndexSet);
            return super.createSubpartitionView(
                    partitionId, subpartitionIndexSet, availabilityListener);
        }
        int subpartition = subpartitionIndexSet.getStartIndex();
        ReplayingSubpartitionView view =
                open(partitionId, subpartition).attach(availabilityListener);
        context.consumerConnections()
                .watch(
                        partitionId,
                        ClonosConsumerConnectionPatch.connectionOf(availabilityListener));
        return view;
    }

    @Override
    public Optional<ResultSubpartitionView> createSubpartitionViewOrRegisterListener(
            ResultPartitionID partitionId,
            ResultSubpartitionIndexSet subpartitionIndexSet,
            BufferAvailabilityListener availabilityListener,
            PartitionRequestListener partitionRequestListener)
            throws IOException {
        if (subpartitionIndexSet.size() != 1) {
            return super.createSubpartitionViewOrRegisterListener(
                    partitionId,
                    subpartitionIndexSet,
                    availabilityListener,
                    partitionRequestListener);
        }
        // A consumer may ask before the producer registered its partition (both are deployed at
        // once, and after a restart the consumer is often first). Flink would park the request in
        // a listener and serve the partition directly once it registers, bypassing the in-flight
        // log; throwing instead fails the whole TCP connection. So wait briefly for the producer,
        // and only then leave the request to Flink: served without an in-flight log, whose
        // absence a later replay reports (a global rollback), or timed out by Flink per receiver.
        long deadline = System.nanoTime() + REGISTRATION_WAIT.toNanos();
        while (true) {
            try {
                return Optional.of(
                        createSubpartitionView(
                                partitionId, subpartitionIndexSet, availabilityListener));
            } catch (PartitionNotFoundException notYet) {
                if (System.nanoTime() - deadline > 0) {
                    LOG.warn(
                            "{} was not registered within {} ms of its request; if it registers later, subpartition {} is served without an in-flight log.",
                            partitionId,
                            REGISTRATION_WAIT.toMillis(),
                            subpartitionIndexSet.getStartIndex());
                    return super.createSubpartitionViewOrRegisterListener(
                            partitionId,
                            subpartitionIndexSet,
                            availabilityListener,
                            partitionRequestListener);
                }
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException(
                            "Interrupted while waiting for " + partitionId + " to register", e);
                }
            }
        }
    }

    private synchronized LoggingSubpartition open(ResultPartitionID partitionId, int subpartition)
            throws IOException {
        LoggingSubpartition existing = context.subpartitionLogs().get(partitionId, subpartition);
        if (existing != null) {
            return existing;
        }
        LoggingSubpartition created =
                new LoggingSubpartition(
                        context,
                        partitionId,
                        subpartition,
                        context.isUnlogged(partitionId)
                                ? new DisabledInFlightLog(ReplayStartEvent.FROM_PRODUCER_START)
                                : inFlightLogs.create(
                                        partitionId + "#" + subpartition,
                                        ReplayStartEvent.FROM_PRODUCER_START),
                        context.subpartitionLogs().metrics(partitionId, subpartition),
                        // a consumer reading its replay: what fits the TaskManager's log memory
                        inFlightLogs.memory().capacity());
        created.setSource(
                super.createSubpartitionView(
                        partitionId, new ResultSubpartitionIndexSet(subpartition), created));
        context.subpartitionLogs().register(partitionId, subpartition, created);
        return created;
    }

    @Override
    public void releasePartition(ResultPartitionID partitionId, Throwable cause) {
        super.releasePartition(partitionId, cause);
        context.causalTasks().partitionReleased(partitionId);
        context.partitionReleased(partitionId);
        for (LoggingSubpartition log : context.subpartitionLogs().remove(partitionId)) {
            try {
                log.close();
            } catch (IOException e) {
                LOG.warn("Could not release the in-flight log of {}.", log, e);
            }
        }
    }
}
