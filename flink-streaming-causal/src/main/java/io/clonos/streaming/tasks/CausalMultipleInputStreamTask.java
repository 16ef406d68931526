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
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.runtime.tasks.MultipleInputStreamTask;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeServiceFactory;

import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/**
 * Clonos's task for an operator chain with several inputs, possibly chained sources; replaces
 * Flink's {@link MultipleInputStreamTask}. Checkpoints reach it as barriers or, with chained
 * sources, as triggers, so it enters epochs on both.
 *
 * <p>With network inputs only, it replays as a two-input task does: the order of its input buffers
 * is logged per gate and it reads a buffer to its end before it switches inputs. A chained source's
 * records reach the operator between those buffers, at moments no determinant records yet, so a
 * task with chained sources logs and shares its determinants but is not replayed ({@link
 * #chainsSources}): its failure rolls the job back globally.
 */
@Internal
public class CausalMultipleInputStreamTask<OUT> extends MultipleInputStreamTask<OUT> {

    private final CausalTaskContext causal;

    public CausalMultipleInputStreamTask(Environment env) throws Exception {
        super(env);
        this.causal =
                chainsSources(configuration, getUserCodeClassLoader())
                        ? CausalTaskContext.createWithoutReplay(env, recordWriter)
                        : CausalTaskContext.create(env, recordWriter);
    }

    /** Whether the task's configuration chains a source to its operator. */
    public static boolean chainsSources(StreamConfig config, ClassLoader userCodeClassLoader) {
        return Arrays.stream(config.getInputs(userCodeClassLoader))
                .anyMatch(input -> input instanceof StreamConfig.SourceInputConfig);
    }

    @Override
    public void init() throws Exception {
        super.init();
        causal.inputProcessorCreated(inputProcessor, operatorChain);
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
