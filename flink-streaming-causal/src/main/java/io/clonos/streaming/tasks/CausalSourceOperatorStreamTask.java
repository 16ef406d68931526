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

import io.clonos.streaming.source.CausalSourceReader;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.checkpoint.CheckpointMetaData;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeServiceFactory;
import org.apache.flink.streaming.runtime.tasks.SourceOperatorStreamTask;
import org.apache.flink.streaming.runtime.tasks.mailbox.TaskMailbox;

import javax.annotation.Nullable;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/** Clonos's task for a FLIP-27 source chain; replaces Flink's {@link SourceOperatorStreamTask}. */
@Internal
public class CausalSourceOperatorStreamTask<T> extends SourceOperatorStreamTask<T> {

    private final CausalTaskContext causal;

    /** The source's reader, ordering its splits' records; null when it stays Flink's. */
    @Nullable private CausalSourceReader<T, ?> orderedReader;

    public CausalSourceOperatorStreamTask(Environment env) throws Exception {
        super(env);
        this.causal = CausalTaskContext.create(env, recordWriter);
    }

    @Override
    public void init() throws Exception {
        super.init();
        orderedReader =
                causal.sources()
                        .orderSourceReader(
                                mainOperator,
                                configuration.getTypeSerializerOut(getUserCodeClassLoader()),
                                0,
                                false);
        inputProcessor = causal.sources().sourceInputCreated(inputProcessor);
        causal.sources().sourceChainCreated(operatorChain);
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
        if (!causal.isCausal()) {
            return super.triggerCheckpointAsync(checkpointMetaData, checkpointOptions);
        }
        return causal.sources()
                .triggerSourceCheckpoint(
                        getMailboxExecutorFactory().createExecutor(TaskMailbox.MIN_PRIORITY),
                        this::isRunning,
                        checkpointMetaData,
                        () -> {
                            if (orderedReader != null) {
                                // the reader's positions must match what left the task
                                orderedReader.emitHeld();
                            }
                        },
                        metrics -> {
                            triggerCheckpointOnBarrier(
                                    checkpointMetaData, checkpointOptions, metrics);
                            causal.startEpoch(checkpointMetaData.getCheckpointId());
                        });
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
