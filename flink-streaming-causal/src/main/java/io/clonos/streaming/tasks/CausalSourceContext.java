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

import io.clonos.runtime.causal.CausalRecovery;
import io.clonos.runtime.causal.CausalTask;
import io.clonos.streaming.source.CausalSourceReader;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.connector.source.ExternallyInducedSourceReader;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.runtime.checkpoint.CheckpointMetaData;
import org.apache.flink.runtime.checkpoint.CheckpointMetricsBuilder;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.streaming.api.operators.ClonosLegacySourcePatch;
import org.apache.flink.streaming.api.operators.ClonosSourceReaderPatch;
import org.apache.flink.streaming.api.operators.SourceOperator;
import org.apache.flink.streaming.api.operators.StreamSource;
import org.apache.flink.streaming.runtime.io.ClonosNetworkInputPatch;
import org.apache.flink.streaming.runtime.io.StreamInputProcessor;
import org.apache.flink.streaming.runtime.tasks.OperatorChain;
import org.apache.flink.streaming.runtime.tasks.mailbox.MailboxDefaultAction;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.function.ThrowingConsumer;
import org.apache.flink.util.function.ThrowingRunnable;

import javax.annotation.Nullable;

import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/**
 * What a Clonos task adds to its sources', its own or those chained to it: the order in which a
 * FLIP-27 reader emits its splits' records, a legacy source's counted output and its held-back
 * start, a source's checkpoints as determinants (the barrier's place among the records) and their
 * replay by a recovering source. Without causal logging the sources are Flink's, and a source takes
 * every checkpoint it is asked for.
 */
@Internal
public final class CausalSourceContext {

    /** Null without causal logging. */
    @Nullable private final CausalTask causal;

    /** Whether an output of the task still regenerates its predecessor's stream for a consumer. */
    private final BooleanSupplier regeneratesPredecessorStream;

    /** The task enters the epoch of a checkpoint it took. */
    private final LongConsumer startEpoch;

    CausalSourceContext(
            @Nullable CausalTask causal,
            BooleanSupplier regeneratesPredecessorStream,
            LongConsumer startEpoch) {
        this.causal = causal;
        this.regeneratesPredecessorStream = regeneratesPredecessorStream;
        this.startEpoch = startEpoch;
    }

    /**
     * A source task's input processor exists: under causal logging it holds back a recovering
     * source and replays its timers and checkpoints. Returns the processor the task is to use.
     */
    public StreamInputProcessor sourceInputCreated(StreamInputProcessor processor) {
        if (causal == null || processor == null) {
            return processor;
        }
        ClonosNetworkInputPatch.countSourceElements(processor, causal);
        return new CausalSourceInput(processor, causal);
    }

    /**
     * A FLIP-27 source's reader exists: under causal logging the order in which it emits its
     * splits' records is logged and replayed. Returns the reader that does so, or null when the
     * source keeps Flink's (no causal logging; a reader whose checkpoints its source triggers). The
     * source is the task's input {@code input}, chained to an operator of several inputs if {@code
     * chained}.
     */
    @Nullable
    public <T> CausalSourceReader<T, ?> orderSourceReader(
            SourceOperator<T, ?> operator,
            TypeSerializer<T> serializer,
            int input,
            boolean chained) {
        if (causal == null
                || operator.getSourceReader() == null
                || operator.getSourceReader() instanceof ExternallyInducedSourceReader) {
            return null;
        }
        return orderSplits(operator, serializer, input, chained);
    }

    private <T, SplitT extends SourceSplit> CausalSourceReader<T, SplitT> orderSplits(
            SourceOperator<T, SplitT> operator,
            TypeSerializer<T> serializer,
            int input,
            boolean chained) {
        CausalSourceReader<T, SplitT> ordered =
                new CausalSourceReader<>(
                        operator.getSourceReader(), causal, serializer, input, chained);
        ClonosSourceReaderPatch.replaceReader(operator, ordered);
        return ordered;
    }

    /**
     * A legacy source's operator chain exists: under causal logging, what its function emits is
     * counted and its watermarks gated ({@link LegacySourceOutput}), and a recovering source passes
     * its predecessor's checkpoints at their places.
     */
    public <T> void legacySourceCreated(StreamSource<T, ?> operator, OperatorChain<?, ?> chain) {
        if (causal == null) {
            return;
        }
        ClonosLegacySourcePatch.wrapOutput(
                operator, output -> new LegacySourceOutput<>(output, causal));
        sourceChainCreated(chain);
    }

    /**
     * Whether a legacy source must not start its function yet: while its recovery waits for its
     * consumers, the task's default action is suspended until the recovery moves on ({@code
     * mailbox} resumes it). Once it may start, it passes what its predecessor had before the first
     * element, and a watch fails the task if its replay stalls (its function, on a thread of its
     * own, may never emit the element a logged action waits for).
     */
    public boolean holdsBackLegacySource(
            MailboxDefaultAction.Controller controller, MailboxExecutor mailbox) {
        if (causal == null) {
            return false;
        }
        causal.processingStarted();
        CausalRecovery recovery = causal.recovery();
        recovery.checkDeadline();
        CompletableFuture<Void> changed = recovery.changed();
        if (recovery.isWaiting()) {
            MailboxDefaultAction.Suspension suspension = controller.suspendDefaultAction();
            changed.thenRun(() -> mailbox.execute(suspension::resume, "recovery moved on"));
            return true;
        }
        causal.fireDueTimers();
        watchReplay(mailbox);
        return false;
    }

    private void watchReplay(MailboxExecutor mailbox) {
        CausalRecovery recovery = causal.recovery();
        if (!recovery.isReplaying()) {
            return;
        }
        recovery.changed()
                .thenRun(
                        () ->
                                mailbox.execute(
                                        () -> {
                                            recovery.checkDeadline();
                                            watchReplay(mailbox);
                                        },
                                        "watch the replay"));
    }

    /**
     * Whether a source may take a checkpoint now. Not while it recovers, nor while an output still
     * regenerates its predecessor's stream: the barrier would land among records its consumers
     * already have, or that a recovering consumer's replay reads before any new barrier, and their
     * checkpoint would not match its own. The checkpoint is declined; a later one is taken.
     */
    public boolean sourceAcceptsCheckpoint() {
        if (causal == null) {
            return true;
        }
        return causal.recovery().isRunning() && !regeneratesPredecessorStream.getAsBoolean();
    }

    /**
     * A source's chain exists: a replay can announce its outputs idle, and a recovering source
     * passes the checkpoints its predecessor took at the logged places again, each as what its
     * chain did before the barrier and the barrier (on whichever thread emits the source's
     * records): the checkpoint was aborted with the failure, so no snapshot, and no acknowledgement
     * to a source coordinator, which never heard of the checkpoint for this attempt and fails the
     * job on one.
     */
    public void sourceChainCreated(OperatorChain<?, ?> chain) {
        if (causal == null) {
            return;
        }
        CausalTaskContext.restoresOutputStatus(causal, chain);
        causal.setCheckpointReplayer(
                checkpoint ->
                        passReplayedCheckpoint(
                                chain, checkpoint.checkpointId(), checkpoint.timestamp()));
    }

    /**
     * Passes a checkpoint its predecessor took, while the task replays: what the chain's operators
     * did before the barrier (a Beam operator finishes its bundle), reading what they read then,
     * and the barrier; then the epoch starts.
     */
    void passReplayedCheckpoint(OperatorChain<?, ?> chain, long checkpointId, long timestamp) {
        try {
            chain.prepareSnapshotPreBarrier(checkpointId);
            chain.broadcastEvent(
                    new CheckpointBarrier(
                            checkpointId,
                            timestamp,
                            CheckpointOptions.forCheckpointWithDefaultLocation()));
            startEpoch.accept(checkpointId);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new FlinkRuntimeException(
                    "The replay of checkpoint " + checkpointId + " failed", e);
        }
    }

    /**
     * A source task takes a checkpoint under causal logging: the barrier's place among the records
     * is a determinant, so it is logged and the checkpoint taken in one mail ({@code mailbox}),
     * with no record slipping in between. Declined while the source may not take one ({@link
     * #sourceAcceptsCheckpoint}); {@code beforeBarrier} runs first (a reader emits what it holds).
     * {@code takeCheckpoint} gets metrics of no alignment: a source has no input to align. It
     * starts the epoch once the checkpoint is taken ({@link CausalTaskContext#startEpoch}): a
     * source task at once, a task with chained sources once its network inputs are aligned too.
     */
    public CompletableFuture<Boolean> triggerSourceCheckpoint(
            MailboxExecutor mailbox,
            BooleanSupplier taskRunning,
            CheckpointMetaData checkpoint,
            ThrowingRunnable<Exception> beforeBarrier,
            ThrowingConsumer<CheckpointMetricsBuilder, Exception> takeCheckpoint) {
        CompletableFuture<Boolean> triggered = new CompletableFuture<>();
        mailbox.execute(
                () -> {
                    if (!taskRunning.getAsBoolean() || !sourceAcceptsCheckpoint()) {
                        triggered.complete(false);
                        return;
                    }
                    try {
                        beforeBarrier.run();
                        if (causal != null) {
                            causal.sourceCheckpoint(
                                    checkpoint.getCheckpointId(), checkpoint.getTimestamp());
                        }
                        takeCheckpoint.accept(
                                new CheckpointMetricsBuilder()
                                        .setAlignmentDurationNanos(0L)
                                        .setBytesProcessedDuringAlignment(0L)
                                        .setCheckpointStartDelayNanos(0L));
                        triggered.complete(true);
                    } catch (Exception e) {
                        triggered.completeExceptionally(e);
                        throw e;
                    }
                },
                "checkpoint %s (Clonos)",
                checkpoint);
        return triggered;
    }
}
