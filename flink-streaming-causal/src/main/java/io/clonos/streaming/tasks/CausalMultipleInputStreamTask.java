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
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.streaming.runtime.tasks.MultipleInputStreamTask;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeServiceFactory;
import org.apache.flink.streaming.runtime.tasks.mailbox.TaskMailbox;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/**
 * Clonos's task for an operator chain with several inputs, possibly chained sources; replaces
 * Flink's {@link MultipleInputStreamTask}. It replays as a two-input task does: the order of its
 * input buffers is logged per gate and it reads a buffer to its end before it switches inputs. A
 * chained source's records reach the operator between those buffers; each is logged with its input,
 * and checkpoints reach the sources as triggers ({@link ChainedSources}).
 */
@Internal
public class CausalMultipleInputStreamTask<OUT> extends MultipleInputStreamTask<OUT> {

    private final CausalTaskContext causal;

    /** The chain's sources under causal logging; null if there are none or no causal logging. */
    @Nullable private ChainedSources sources;

    public CausalMultipleInputStreamTask(Environment env) throws Exception {
        super(env);
        this.causal = CausalTaskContext.create(env, recordWriter);
    }

    @Override
    public void init() throws Exception {
        super.init();
        causal.inputProcessorCreated(inputProcessor, operatorChain);
        if (inputProcessor != null && !operatorChain.getSourceTaskInputs().isEmpty()) {
            sources =
                    ChainedSources.create(
                            causal,
                            inputProcessor,
                            operatorChain,
                            getCheckpointBarrierHandler().orElseThrow(),
                            getUserCodeClassLoader());
        }
    }

    @Override
    public void triggerCheckpointOnBarrier(
            CheckpointMetaData checkpointMetaData,
            CheckpointOptions checkpointOptions,
            CheckpointMetricsBuilder checkpointMetrics)
            throws IOException {
        if (sources != null
                && sources.passesReplayed(
                        checkpointMetaData.getCheckpointId(), checkpointMetaData.getTimestamp())) {
            return;
        }
        super.triggerCheckpointOnBarrier(checkpointMetaData, checkpointOptions, checkpointMetrics);
        causal.startEpoch(checkpointMetaData.getCheckpointId());
    }

    @Override
    public CompletableFuture<Boolean> triggerCheckpointAsync(
            CheckpointMetaData checkpointMetaData, CheckpointOptions checkpointOptions) {
        return causal.triggerCheckpoint(
                checkpointMetaData.getCheckpointId(),
                () -> takeCheckpoint(checkpointMetaData, checkpointOptions));
    }

    private CompletableFuture<Boolean> takeCheckpoint(
            CheckpointMetaData checkpointMetaData, CheckpointOptions checkpointOptions) {
        if (sources == null
                || (checkpointOptions.getCheckpointType().isSavepoint()
                        && ((SavepointType) checkpointOptions.getCheckpointType())
                                .isSynchronous())) {
            // a stop-with-savepoint stops the sources first and ends the job: nothing to replay
            return super.triggerCheckpointAsync(checkpointMetaData, checkpointOptions);
        }
        return sources.triggerCheckpoint(
                getMailboxExecutorFactory().createExecutor(TaskMailbox.MIN_PRIORITY),
                this::isRunning,
                checkpointMetaData,
                checkpointOptions);
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
