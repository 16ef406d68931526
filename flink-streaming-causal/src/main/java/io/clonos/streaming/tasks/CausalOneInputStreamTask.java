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
import org.apache.flink.runtime.checkpoint.CheckpointMetricsBuilder;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.streaming.runtime.tasks.OneInputStreamTask;

import java.io.IOException;

/** Clonos's task for an operator chain with one input; replaces Flink's {@link OneInputStreamTask}. */
@Internal
public class CausalOneInputStreamTask<IN, OUT> extends OneInputStreamTask<IN, OUT> {

    private final EpochTracker epochs;

    public CausalOneInputStreamTask(Environment env) throws Exception {
        super(env);
        this.epochs = EpochTracker.register(env);
    }

    @Override
    public void triggerCheckpointOnBarrier(
            CheckpointMetaData checkpointMetaData,
            CheckpointOptions checkpointOptions,
            CheckpointMetricsBuilder checkpointMetrics)
            throws IOException {
        epochs.startEpoch(checkpointMetaData.getCheckpointId());
        super.triggerCheckpointOnBarrier(checkpointMetaData, checkpointOptions, checkpointMetrics);
    }
}
