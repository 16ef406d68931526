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

import io.clonos.runtime.causal.CausalTask;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.event.TaskEvent;
import org.apache.flink.runtime.io.network.TaskEventPublisher;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Where a producer's output subpartitions and its consumers' answers find the causal side of the
 * task that writes them: to piggyback its log on every buffer, to report consumer connections to
 * its recovery and to hand it the determinants its consumers send back. Keyed by partition, which
 * is unique per producer attempt.
 *
 * <p>A partition is served as soon as it is registered with the partition manager, before its task
 * has built its causal side: a consumer may connect, and answer, in between. What arrives for a
 * registered partition whose task is not there yet waits here, in order, and reaches the task when
 * it registers; without that a recovering producer would wait in vain for a consumer that answered
 * too early.
 */
@Internal
public final class CausalTaskRegistry {

    private static final Logger LOG = LoggerFactory.getLogger(CausalTaskRegistry.class);

    private final Map<ResultPartitionID, Slot> partitions = new ConcurrentHashMap<>();
    private final SubpartitionLogs subpartitionLogs;

    CausalTaskRegistry(SubpartitionLogs subpartitionLogs) {
        this.subpartitionLogs = subpartitionLogs;
    }

    /** The partition is served from now on: what arrives for it waits for its task. */
    void partitionRegistered(ResultPartitionID partition) {
        partitions.computeIfAbsent(partition, p -> new Slot());
    }

    /** The partition is gone, and with it whatever still waited for its task. */
    void partitionReleased(ResultPartitionID partition) {
        partitions.remove(partition);
    }

    /**
     * Registers the task that writes {@code partition}, restored from checkpoint {@code
     * restoredEpoch}; its subpartition {@code i} is consumer {@code firstConsumer + i} of the
     * task's recovery. Hands it what arrived for the partition before.
     */
    public void register(
            ResultPartitionID partition, CausalTask task, int firstConsumer, long restoredEpoch) {
        partitions
                .computeIfAbsent(partition, p -> new Slot())
                .attach(new Producer(partition, task, firstConsumer, restoredEpoch));
    }

    public void unregister(ResultPartitionID partition) {
        partitions.remove(partition);
    }

    @Nullable
    CausalTask of(ResultPartitionID partition) {
        Slot slot = partitions.get(partition);
        Producer producer = slot == null ? null : slot.producer;
        return producer == null ? null : producer.task;
    }

    /** A consumer connected to a subpartition of {@code partition}. */
    void consumerConnected(ResultPartitionID partition, int subpartition) {
        deliver(
                partition,
                producer ->
                        producer.task
                                .recovery()
                                .consumerConnected(producer.firstConsumer + subpartition),
                "a connection");
    }

    /**
     * A consumer answered a recovering producer: it replays with its determinants and skips what
     * the consumer has.
     */
    void answered(ResultPartitionID partition, DeterminantResponseEvent answer) {
        deliver(partition, producer -> producer.answered(answer, subpartitionLogs), "an answer");
    }

    /**
     * A recovering consumer ended its replay: the producer may cut fresh epochs into what it sends
     * it. In order after the consumer's answer, which this undoes.
     */
    void replayEnded(ResultPartitionID partition, ReplayEndEvent end) {
        deliver(
                partition,
                producer -> subpartitionLogs.consumerReplayEnded(partition, end.subpartition()),
                "the end of a consumer's replay");
    }

    private void deliver(ResultPartitionID partition, Consumer<Producer> action, String what) {
        Slot slot = partitions.get(partition);
        if (slot == null) {
            LOG.debug(
                    "Dropped {} for {}: no task of this TaskManager produces it.", what, partition);
            return;
        }
        slot.deliver(action);
    }

    /**
     * The TaskManager's task event publisher, with consumers' answers to recovering producers
     * routed here: Flink's own dispatcher drops an event for which no listener is subscribed yet.
     */
    public TaskEventPublisher routingAnswers(TaskEventPublisher flink) {
        return (partition, event) -> publish(flink, partition, event);
    }

    private boolean publish(
            TaskEventPublisher flink, ResultPartitionID partition, TaskEvent event) {
        if (event instanceof DeterminantResponseEvent) {
            answered(partition, (DeterminantResponseEvent) event);
            return true;
        }
        if (event instanceof ReplayEndEvent) {
            replayEnded(partition, (ReplayEndEvent) event);
            return true;
        }
        return flink.publish(partition, event);
    }

    private record Producer(
            ResultPartitionID partition, CausalTask task, int firstConsumer, long restoredEpoch) {

        void answered(DeterminantResponseEvent answer, SubpartitionLogs subpartitionLogs) {
            try {
                task.answered(
                        firstConsumer + answer.subpartition(),
                        answer.deltas(),
                        () ->
                                subpartitionLogs.continueAfter(
                                        partition, answer.subpartition(), restoredEpoch, answer));
            } catch (Exception e) {
                LOG.warn(
                        "A consumer's answer to {} cannot be read; the recovery will time out and fall back.",
                        partition,
                        e);
            }
        }
    }

    /** One partition: its producer once registered, and what arrived before, in order. */
    private static final class Slot {

        @Nullable private volatile Producer producer;

        @GuardedBy("this")
        private List<Consumer<Producer>> pending = new ArrayList<>();

        synchronized void attach(Producer registered) {
            producer = registered;
            List<Consumer<Producer>> early = pending;
            pending = List.of();
            for (Consumer<Producer> action : early) {
                action.accept(registered);
            }
        }

        synchronized void deliver(Consumer<Producer> action) {
            if (producer == null) {
                pending.add(action);
            } else {
                action.accept(producer);
            }
        }
    }

    void clear() {
        partitions.clear();
    }
}
