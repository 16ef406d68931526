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

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which task attempts start afresh: without waiting for determinants from their consumers and
 * without regenerating their predecessor's output, because the JobManager restarts them where no
 * determinant can help (a global rollback restarts every consumer too) or where the job chose
 * at-least-once ({@code clonos.recovery.orphan-fallback}). The scheduler marks an attempt before it
 * deploys it; the shuffle master describes the attempt's partitions with the mark ({@link
 * MarkedShuffleDescriptor}), since Flink deploys a task with nothing else Clonos could use, and the
 * TaskManager's network context hands it to the task.
 *
 * <p>One per JobManager, owned by its {@link ClonosShuffleMaster}; the scheduler reaches it through
 * the shuffle master Flink gives it.
 */
@Internal
public final class FreshStarts {

    /** Per job, "vertex#attempt" of the attempts to start afresh. */
    private final Map<JobID, Set<String>> marked = new ConcurrentHashMap<>();

    /** The JobManager will deploy attempt {@code attempt} of {@code vertex} to start afresh. */
    public void mark(JobID job, ExecutionVertexID vertex, int attempt) {
        marked.computeIfAbsent(job, j -> ConcurrentHashMap.newKeySet()).add(vertex + "#" + attempt);
    }

    /** Whether attempt {@code attempt} of job {@code job} starts afresh. */
    public boolean isMarked(JobID job, ExecutionAttemptID producer) {
        Set<String> attempts = marked.get(job);
        return attempts != null
                && attempts.contains(
                        producer.getExecutionVertexId() + "#" + producer.getAttemptNumber());
    }

    void forget(JobID job) {
        marked.remove(job);
    }
}
