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
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.consumer.ClonosChannelProbe;
import org.apache.flink.runtime.io.network.partition.consumer.InputChannel;
import org.apache.flink.runtime.io.network.partition.consumer.LocalInputChannel;

import javax.annotation.concurrent.GuardedBy;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The highest checkpoint whose barrier a task has pending: triggered at the task (a source, a task
 * with chained sources, a task whose inputs finished), or arrived in one of its input channels,
 * whether the task has read it or not. While a barrier is pending that an output has not sent yet,
 * the output lets data through even when its in-flight log is full ({@link LogBackpressure}).
 *
 * <p>Only tasks of jobs that take checkpoints register: without checkpoints no barrier ever comes
 * to free a full log, and holding a producer back would stop the job.
 */
@Internal
public final class PendingBarriers implements LongSupplier {

    private final SubpartitionLogs local;
    private final List<ClonosInputGate> gates;

    @GuardedBy("this")
    private long triggered = Long.MIN_VALUE;

    @GuardedBy("this")
    private long beforeTrigger = Long.MIN_VALUE;

    private PendingBarriers(SubpartitionLogs local, List<ClonosInputGate> gates) {
        this.local = local;
        this.gates = gates;
    }

    /**
     * The pending barriers of the task that reads {@code gates} and writes {@code partitions}; its
     * outputs are held back when their logs are full from now on.
     */
    public static PendingBarriers register(
            ClonosNetworkContext network,
            List<ClonosInputGate> gates,
            List<ResultPartitionID> partitions) {
        PendingBarriers pending = new PendingBarriers(network.subpartitionLogs(), gates);
        for (ResultPartitionID partition : partitions) {
            network.subpartitionLogs().holdBackWhenFull(partition, pending);
        }
        return pending;
    }

    /**
     * Checkpoint {@code checkpointId} is triggered at the task, by {@code trigger}: its barrier is
     * pending from now on, unless the task declines the checkpoint.
     */
    public CompletableFuture<Boolean> triggering(
            long checkpointId, Supplier<CompletableFuture<Boolean>> trigger) {
        triggered(checkpointId);
        CompletableFuture<Boolean> taken;
        try {
            taken = trigger.get();
        } catch (RuntimeException e) {
            declined(checkpointId);
            throw e;
        }
        taken.whenComplete(
                (accepted, failure) -> {
                    if (failure != null || !accepted) {
                        declined(checkpointId);
                    }
                });
        return taken;
    }

    /** Checkpoint {@code checkpointId} was triggered at the task; its barrier is to come. */
    synchronized void triggered(long checkpointId) {
        if (checkpointId > triggered) {
            beforeTrigger = triggered;
            triggered = checkpointId;
        }
    }

    /** The task declined checkpoint {@code checkpointId}: no barrier comes for it. */
    synchronized void declined(long checkpointId) {
        if (triggered == checkpointId) {
            triggered = beforeTrigger;
        }
    }

    @Override
    public long getAsLong() {
        long highest;
        synchronized (this) {
            highest = triggered;
        }
        for (ClonosInputGate gate : gates) {
            for (int i = 0; i < gate.getNumberOfInputChannels(); i++) {
                highest = Math.max(highest, arrivedBarrier(gate.getChannel(i)));
            }
        }
        return highest;
    }

    /**
     * The highest checkpoint whose barrier arrived in a channel. A remote channel's is kept by
     * Flink. A local channel reads straight from its producer's subpartition, so the barrier the
     * producer has pending, and will queue there, counts: a producer of this TaskManager, whose
     * pending barriers are known here.
     */
    private long arrivedBarrier(InputChannel channel) {
        return channel instanceof LocalInputChannel
                ? local.pendingBarrier(channel.getPartitionId())
                : ClonosChannelProbe.arrivedBarrier(channel);
    }
}
