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
import io.clonos.runtime.causal.LocalRecoveryImpossibleException;
import io.clonos.streaming.source.CausalSourceReader;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.checkpoint.CheckpointException;
import org.apache.flink.runtime.checkpoint.channel.ChannelStateWriter;
import org.apache.flink.streaming.runtime.io.DataInputStatus;
import org.apache.flink.streaming.runtime.io.StreamTaskInput;
import org.apache.flink.streaming.runtime.io.StreamTaskSourceInput;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * A source chained to an operator of several inputs, as the task's input processor reads it under
 * causal logging: while the task waits for its determinants the source emits nothing, and while it
 * replays only when the replay's next element is the source's record; in between it is unavailable
 * until the recovery moves on. Flink's barrier handler keeps the source's own input, so blocking it
 * for an alignment works as in Flink.
 */
@Internal
final class ChainedSourceInput<T> implements StreamTaskInput<T> {

    private final StreamTaskSourceInput<T> source;
    private final CausalTask task;

    /** The source's reader, ordered; null if it stays Flink's and cannot be replayed. */
    @Nullable private final CausalSourceReader<T, ?> reader;

    /** Whether the replay is partway through a network read, which must end first. */
    private final BooleanSupplier networkReadInProgress;

    ChainedSourceInput(
            StreamTaskSourceInput<T> source,
            CausalTask task,
            @Nullable CausalSourceReader<?, ?> reader,
            BooleanSupplier networkReadInProgress) {
        this.source = source;
        this.task = task;
        this.networkReadInProgress = networkReadInProgress;
        @SuppressWarnings("unchecked")
        CausalSourceReader<T, ?> typed = (CausalSourceReader<T, ?>) reader;
        this.reader = typed;
    }

    @Override
    public DataInputStatus emitNext(DataOutput<T> output) throws Exception {
        // the source may emit while Flink still restores the task, before its own mailbox loop
        task.processingStarted();
        CausalRecovery recovery = task.recovery();
        recovery.checkDeadline();
        if (recovery.isWaiting()) {
            return DataInputStatus.NOTHING_AVAILABLE;
        }
        if (recovery.isReplaying()) {
            task.fireDueTimers();
            if (recovery.isReplaying() && !isDue()) {
                return DataInputStatus.NOTHING_AVAILABLE;
            }
        }
        return source.emitNext(output);
    }

    /**
     * Whether the replay's next element is this source's record: the next determinant is the
     * source's, and no network read the predecessor did in one go is still partway handed out.
     */
    private boolean isDue() {
        if (reader == null) {
            throw new LocalRecoveryImpossibleException(
                    "The source "
                            + source.getOperator().getOperatorID()
                            + " chained to the task keeps Flink's reader, which triggers its own checkpoints, so its records cannot be replayed");
        }
        return !networkReadInProgress.getAsBoolean() && reader.isDue();
    }

    @Override
    public CompletableFuture<?> getAvailableFuture() {
        CausalRecovery recovery = task.recovery();
        if (recovery.isRunning()) {
            return source.getAvailableFuture();
        }
        // the future first, then the check: a change in between completes it
        CompletableFuture<Void> changed = recovery.changed();
        if (recovery.isWaiting()) {
            return changed;
        }
        if (recovery.isReplaying() && !task.timerDue() && !isDue()) {
            // another input's turn, which the task thread takes; the recovery's end frees this one
            return changed;
        }
        return source.getAvailableFuture();
    }

    @Override
    public int getInputIndex() {
        return source.getInputIndex();
    }

    @Override
    public CompletableFuture<Void> prepareSnapshot(
            ChannelStateWriter channelStateWriter, long checkpointId) throws CheckpointException {
        return source.prepareSnapshot(channelStateWriter, checkpointId);
    }

    @Override
    public void close() throws IOException {
        source.close();
    }
}
