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
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeServiceFactory;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/**
 * Clonos's task for an operator chain with one input; replaces Flink's {@link OneInputStreamTask}.
 */
@Internal
public class CausalOneInputStreamTask<IN, OUT> extends OneInputStreamTask<IN, OUT> {

    private final CausalTaskContext causal;

    public CausalOneInputStreamTask(Environment env) throws Exception {
        super(env);
        this.causal = CausalTaskContext.create(env, recordWriter);
    }

    @Override
    public void init() throws Exception {
        super.init();
        causal.inputProcessorCreated(inputProcessor, operatorChain);
    }

    /** Flink triggers a task whose inputs finished. */
    @Override
    public CompletableFuture<Boolean> triggerCheckpointAsync(
            CheckpointMetaData checkpointMetaData, CheckpointOptions checkpointOptions) {
        return causal.triggerCheckpoint(
                checkpointMetaData.getCheckpointId(),
                () -> super.triggerCheckpointAsync(checkpointMetaData, checkpointOptions));
    }

    @Override
    public void triggerCheckpointOnBarrier(
            CheckpointMetaData checkpointMetaData,
            CheckpointOptions checkpointOptions,
            CheckpointMetricsBuilder checkpointMetrics)
            throws IOException {
        super.triggerCheckpointOnBarrier(checkpointMetaData, checkpointOptions, checkpointMetrics);
        causal.startEpoch(checkpointMetaData.getCheckpointId());
    }

    @Override
    public Future<Void> notifyCheckpointCompleteAsync(long checkpointId) {
        causal.checkpointCompleted(checkpointId);
        return super.notifyCheckpointCompleteAsync(checkpointId);
    }

    @Override
    public Future<Void> notifyCheckpointAbortAsync(
            long checkpointId, long latestCompletedCheckpointId) {
        return causal.checkpointAborted(
                checkpointId,
                latestCompletedCheckpointId,
                super::notifyCheckpointAbortAsync,
                super::notifyCheckpointCompleteAsync);
    }

    @Override
    public ProcessingTimeServiceFactory getProcessingTimeServiceFactory() {
        return causal.wrap(super.getProcessingTimeServiceFactory());
    }

    @Override
    public void runMailboxLoop() throws Exception {
        causal.processingStarted();
        super.runMailboxLoop();
    }

    @Override
    protected void cleanUpInternal() throws Exception {
        causal.closed();
        super.cleanUpInternal();
    }
}
