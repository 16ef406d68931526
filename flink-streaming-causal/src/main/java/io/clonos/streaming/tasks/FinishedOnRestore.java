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

package io.clonos.streaming.tasks;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.runtime.io.network.partition.ResultPartition;

/**
 * A task that Flink deploys finished on restore within a local recovery: a producer that had
 * finished before the checkpoint its restarted consumers restore, restarted with them so that they
 * read the end of its output again (the JobManager's {@code FinishedProducers}).
 */
@Internal
final class FinishedOnRestore {

    private FinishedOnRestore() {}

    /**
     * Whether the task is deployed finished on restore; if so, its consumers count as having
     * processed all its data. Every consumer read the end of its output before the checkpoint, and
     * the running ones ended the channel and never read this attempt's: Flink's task would wait for
     * their acknowledgement, which never comes, before it finishes. The restarted consumers
     * acknowledge again, which changes nothing.
     */
    static boolean prepare(Environment environment) {
        if (!environment.getTaskStateManager().isTaskDeployedAsFinished()) {
            return false;
        }
        for (ResultPartitionWriter writer : environment.getAllWriters()) {
            if (writer instanceof ResultPartition) {
                for (int i = 0; i < writer.getNumberOfSubpartitions(); i++) {
                    ((ResultPartition) writer).onSubpartitionAllDataProcessed(i);
                }
            }
        }
        return true;
    }
}
