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

import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.Determinant;
import io.clonos.streaming.source.CausalSourceReader;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.runtime.checkpoint.CheckpointMetaData;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.streaming.api.operators.SourceOperator;
import org.apache.flink.streaming.runtime.io.ClonosNetworkInputPatch;
import org.apache.flink.streaming.runtime.io.StreamInputProcessor;
import org.apache.flink.streaming.runtime.io.StreamTaskSourceInput;
import org.apache.flink.streaming.runtime.io.checkpointing.CheckpointBarrierHandler;
import org.apache.flink.streaming.runtime.tasks.OperatorChain;
import org.apache.flink.util.FlinkRuntimeException;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * The sources chained to a task's operator of several inputs, under causal logging. Their records
 * reach the operator between the network inputs' buffers, wherever the task happens to take them:
 * each of their records is logged with its input ({@link Determinant.SourceSplit}) as each buffer
 * is ({@link Determinant.Order}), and a recovered task's source emits only when the replay's next
 * element is its record ({@link ChainedSourceInput}), so the task reads its inputs in its
 * predecessor's order.
 *
 * <p>A checkpoint reaches the sources as a trigger, not as a barrier: its place among the records
 * is logged and the sources' barriers go to Flink's barrier handler in the same mail; a replay
 * hands them over at the logged places. The epoch starts once the network inputs are aligned too. A
 * checkpoint whose trigger the replay handed over was aborted with the failure: the task passes it
 * without a snapshot ({@link #passesReplayed}), since a snapshot would acknowledge it to the
 * sources' coordinators, which never heard of it for this attempt and fail the job on that.
 */
@Internal
final class ChainedSources {

    private final CausalTaskContext context;
    private final OperatorChain<?, ?> chain;
    private final CheckpointBarrierHandler barriers;
    private final List<CausalSourceReader<?, ?>> readers = new ArrayList<>();

    /** Checkpoints whose triggers the replay handed over and whose barriers did not leave yet. */
    private final Set<Long> replayedTriggers = new HashSet<>();

    private ChainedSources(
            CausalTaskContext context,
            OperatorChain<?, ?> chain,
            CheckpointBarrierHandler barriers) {
        this.context = context;
        this.chain = chain;
        this.barriers = barriers;
    }

    /**
     * Orders the readers of the chain's sources and puts {@link ChainedSourceInput}s in the
     * processor; null without causal logging. Before the operators open: a source's reader exists
     * from then on, and sees every split it is given.
     */
    @Nullable
    static ChainedSources create(
            CausalTaskContext context,
            StreamInputProcessor processor,
            OperatorChain<?, ?> chain,
            CheckpointBarrierHandler barriers,
            ClassLoader userCodeClassLoader)
            throws Exception {
        CausalTask task = context.causalTask();
        if (task == null) {
            return null;
        }
        ChainedSources sources = new ChainedSources(context, chain, barriers);
        Map<StreamTaskSourceInput<?>, CausalSourceReader<?, ?>> ordered = new HashMap<>();
        for (StreamTaskSourceInput<?> input : chain.getSourceTaskInputs()) {
            CausalSourceReader<?, ?> reader = sources.order(input, userCodeClassLoader);
            if (reader != null) {
                ordered.put(input, reader);
                sources.readers.add(reader);
            }
        }
        ClonosNetworkInputPatch.wrapChainedSources(
                processor,
                input ->
                        new ChainedSourceInput<>(
                                input, task, ordered.get(input), context::replaysNetworkRead));
        task.setCheckpointReplayer(sources::handOver);
        return sources;
    }

    @Nullable
    private <T> CausalSourceReader<T, ?> order(
            StreamTaskSourceInput<T> input, ClassLoader userCodeClassLoader) throws Exception {
        SourceOperator<T, ?> operator = input.getOperator();
        operator.initReader();
        return context.sources()
                .orderSourceReader(
                        operator,
                        operator.getOperatorConfig().getTypeSerializerOut(userCodeClassLoader),
                        input.getInputIndex(),
                        true);
    }

    /**
     * Checkpoint {@code checkpoint} is triggered: in one mail, the readers emit what a replay had
     * them hold, the trigger's place is logged and the sources' barriers reach the barrier handler.
     */
    CompletableFuture<Boolean> triggerCheckpoint(
            MailboxExecutor mailbox,
            BooleanSupplier taskRunning,
            CheckpointMetaData checkpoint,
            CheckpointOptions options) {
        return context.sources()
                .triggerSourceCheckpoint(
                        mailbox,
                        taskRunning,
                        checkpoint,
                        () -> {
                            for (CausalSourceReader<?, ?> reader : readers) {
                                reader.emitHeld();
                            }
                        },
                        metrics ->
                                emitBarriers(
                                        new CheckpointBarrier(
                                                checkpoint.getCheckpointId(),
                                                checkpoint.getTimestamp(),
                                                options)));
    }

    /** The replay reached a checkpoint its predecessor's sources were triggered for. */
    private void handOver(Determinant.SourceCheckpoint checkpoint) {
        replayedTriggers.add(checkpoint.checkpointId());
        try {
            emitBarriers(
                    new CheckpointBarrier(
                            checkpoint.checkpointId(),
                            checkpoint.timestamp(),
                            CheckpointOptions.forCheckpointWithDefaultLocation()));
        } catch (IOException e) {
            throw new FlinkRuntimeException(
                    "The replay of checkpoint " + checkpoint.checkpointId() + " failed", e);
        }
    }

    private void emitBarriers(CheckpointBarrier barrier) throws IOException {
        for (StreamTaskSourceInput<?> input : chain.getSourceTaskInputs()) {
            for (InputChannelInfo channel : input.getChannelInfos()) {
                barriers.processBarrier(barrier, channel, false);
            }
        }
    }

    /**
     * The task's inputs are aligned for {@code checkpointId}: if the replay handed over its
     * trigger, the chain passes it without a snapshot and true is returned; otherwise the task
     * takes it.
     */
    boolean passesReplayed(long checkpointId, long timestamp) {
        if (!replayedTriggers.remove(checkpointId)) {
            return false;
        }
        context.sources().passReplayedCheckpoint(chain, checkpointId, timestamp);
        return true;
    }
}
