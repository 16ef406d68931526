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
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.runtime.checkpoint.CheckpointMetaData;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.streaming.api.functions.source.SourceFunction;
import org.apache.flink.streaming.api.operators.StreamSource;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeServiceFactory;
import org.apache.flink.streaming.runtime.tasks.SourceStreamTask;
import org.apache.flink.streaming.runtime.tasks.mailbox.MailboxDefaultAction;
import org.apache.flink.streaming.runtime.tasks.mailbox.TaskMailbox;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/**
 * Clonos's task for a legacy {@link SourceFunction} chain; replaces Flink's {@link
 * SourceStreamTask}. The function emits from a thread of its own, holding the checkpoint lock, and
 * the task's checkpoints and timers take the same lock: where they interleave with its records is
 * logged as for any source ({@link LegacySourceOutput}), and a recovered task's function, which
 * must emit the same records from its restored state (as any replayable source), has them passed at
 * the logged places. The function starts once the task's consumers answered.
 */
@Internal
public class CausalSourceStreamTask<
                OUT, SRC extends SourceFunction<OUT>, OP extends StreamSource<OUT, SRC>>
        extends SourceStreamTask<OUT, SRC, OP> {

    private final CausalTaskContext causal;

    public CausalSourceStreamTask(Environment env) throws Exception {
        super(env);
        this.causal = CausalTaskContext.create(env, recordWriter);
    }

    @Override
    protected void init() {
        super.init();
        causal.sources().legacySourceCreated(mainOperator, operatorChain);
    }

    @Override
    protected void processInput(MailboxDefaultAction.Controller controller) throws Exception {
        if (causal.sources().holdsBackLegacySource(controller, mailbox())) {
            return;
        }
        super.processInput(controller);
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
        if (!causal.isCausal() || checkpointOptions.getCheckpointType().isSavepoint()) {
            // a savepoint (Flink's stop-with-savepoint among them) is not replayed
            causal.startEpoch(checkpointMetaData.getCheckpointId());
            return super.triggerCheckpointAsync(checkpointMetaData, checkpointOptions);
        }
        return causal.sources()
                .triggerSourceCheckpoint(
                        mailbox(),
                        this::isRunning,
                        checkpointMetaData,
                        () -> {},
                        metrics -> {
                            triggerCheckpointOnBarrier(
                                    checkpointMetaData, checkpointOptions, metrics);
                            causal.startEpoch(checkpointMetaData.getCheckpointId());
                        });
    }

    /** The mailbox's executor; its mails run under the checkpoint lock, as every mailbox action. */
    private MailboxExecutor mailbox() {
        return getMailboxExecutorFactory().createExecutor(TaskMailbox.MIN_PRIORITY);
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
    protected void cleanUpInternal() {
        causal.closed();
        super.cleanUpInternal();
    }
}
