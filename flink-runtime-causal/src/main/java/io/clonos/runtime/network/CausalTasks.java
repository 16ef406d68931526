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
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;

import javax.annotation.Nullable;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a producer's output subpartitions find the causal side of the task that writes them: to
 * piggyback its log on every buffer and to report consumer connections to its recovery. Keyed by
 * partition, which is unique per producer attempt.
 */
@Internal
public final class CausalTasks {

    private static final Map<ResultPartitionID, Entry> PARTITIONS = new ConcurrentHashMap<>();

    private CausalTasks() {}

    /**
     * Registers the task that writes {@code partition}; its subpartition {@code i} is consumer
     * {@code firstConsumer + i} of the task's recovery.
     */
    public static void register(ResultPartitionID partition, CausalTask task, int firstConsumer) {
        PARTITIONS.put(partition, new Entry(task, firstConsumer));
    }

    public static void unregister(ResultPartitionID partition) {
        PARTITIONS.remove(partition);
    }

    @Nullable
    static CausalTask of(ResultPartitionID partition) {
        Entry entry = PARTITIONS.get(partition);
        return entry == null ? null : entry.task;
    }

    /** A consumer connected to a subpartition of {@code partition}. */
    static void consumerConnected(ResultPartitionID partition, int subpartition) {
        Entry entry = PARTITIONS.get(partition);
        if (entry != null) {
            entry.task.recovery().consumerConnected(entry.firstConsumer + subpartition);
        }
    }

    private record Entry(CausalTask task, int firstConsumer) {}
}
