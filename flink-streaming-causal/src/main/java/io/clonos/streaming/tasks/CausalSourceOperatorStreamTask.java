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
import org.apache.flink.runtime.checkpoint.CheckpointMetaData;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.streaming.runtime.tasks.SourceOperatorStreamTask;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/** Clonos's task for a FLIP-27 source chain; replaces Flink's {@link SourceOperatorStreamTask}. */
@Internal
public class CausalSourceOperatorStreamTask<T> extends SourceOperatorStreamTask<T> {

    private final CausalTaskContext causal;

    public CausalSourceOperatorStreamTask(Environment env) throws Exception {
        super(env);
        this.causal = CausalTaskContext.create(env);
    }

    @Override
    public CompletableFuture<Boolean> triggerCheckpointAsync(
            CheckpointMetaData checkpointMetaData, CheckpointOptions checkpointOptions) {
        causal.startEpoch(checkpointMetaData.getCheckpointId());
        return super.triggerCheckpointAsync(checkpointMetaData, checkpointOptions);
    }

    @Override
    public Future<Void> notifyCheckpointCompleteAsync(long checkpointId) {
        causal.checkpointCompleted(checkpointId);
        return super.notifyCheckpointCompleteAsync(checkpointId);
    }
}
