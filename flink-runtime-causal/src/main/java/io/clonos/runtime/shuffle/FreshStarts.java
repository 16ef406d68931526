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

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which task attempts start afresh: without waiting for determinants from their consumers and
 * without regenerating their predecessor's output, because the JobManager restarts them where
 * no determinant can help (a global rollback restarts every consumer too) or where the job chose
 * at-least-once ({@code clonos.recovery.orphan-fallback}). The JobManager marks an attempt before
 * it deploys it; the mark travels to the TaskManager with the attempt's partitions ({@link
 * FreshStartShuffleDescriptor}), since Flink deploys a task with nothing else Clonos could use.
 */
@Internal
public final class FreshStarts {

    /** JobManager side: per job, "vertex#attempt" of the attempts to start afresh. */
    private static final Map<JobID, Set<String>> MARKED = new ConcurrentHashMap<>();

    /** TaskManager side: partitions whose producing attempt starts afresh. */
    private static final Set<ResultPartitionID> FRESH_PARTITIONS = ConcurrentHashMap.newKeySet();

    private FreshStarts() {}

    /** The JobManager will deploy attempt {@code attempt} of {@code vertex} to start afresh. */
    public static void mark(JobID job, ExecutionVertexID vertex, int attempt) {
        MARKED.computeIfAbsent(job, j -> ConcurrentHashMap.newKeySet()).add(vertex + "#" + attempt);
    }

    static boolean isMarked(JobID job, ExecutionAttemptID producer) {
        Set<String> marked = MARKED.get(job);
        return marked != null && marked.contains(producer.getExecutionVertexId() + "#" + producer.getAttemptNumber());
    }

    static void forget(JobID job) {
        MARKED.remove(job);
    }

    /** A partition deployed to this TaskManager belongs to an attempt that starts afresh. */
    public static void partitionStartsFresh(ResultPartitionID partition) {
        FRESH_PARTITIONS.add(partition);
    }

    /** Whether the task writing {@code partitions} starts afresh; forgets them. */
    public static boolean startsFresh(Collection<ResultPartitionID> partitions) {
        boolean fresh = false;
        for (ResultPartitionID partition : partitions) {
            fresh |= FRESH_PARTITIONS.remove(partition);
        }
        return fresh;
    }
}
