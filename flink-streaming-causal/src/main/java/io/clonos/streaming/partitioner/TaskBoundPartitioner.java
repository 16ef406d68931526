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

package io.clonos.streaming.partitioner;

import io.clonos.runtime.causal.CausalTask;

import org.apache.flink.annotation.Internal;

import javax.annotation.Nullable;

/**
 * A partitioner whose choices are the task's determinants: it is told its task when the task is
 * built (Flink builds partitioners from the job's configuration, with no way to reach the task).
 */
@Internal
interface TaskBoundPartitioner {

    /** The task whose record writer uses the partitioner; null without causal logging. */
    void bind(@Nullable CausalTask task);

    /** The bound task, when the caller is the task's thread and the task processes; else null. */
    @Nullable
    static CausalTask processing(@Nullable CausalTask task) {
        return task != null && task.isProcessing() ? task : null;
    }
}
