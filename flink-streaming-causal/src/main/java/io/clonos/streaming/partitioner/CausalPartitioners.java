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
package io.clonos.streaming.partitioner;

import io.clonos.runtime.causal.CausalTask;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.api.writer.ChannelSelectorRecordWriter;
import org.apache.flink.runtime.io.network.api.writer.RecordWriter;
import org.apache.flink.runtime.io.network.api.writer.RecordWriterDelegate;
import org.apache.flink.streaming.api.graph.NonChainedOutput;
import org.apache.flink.streaming.runtime.partitioner.RebalancePartitioner;
import org.apache.flink.streaming.runtime.partitioner.RescalePartitioner;
import org.apache.flink.streaming.runtime.partitioner.ShufflePartitioner;
import org.apache.flink.streaming.runtime.partitioner.StreamPartitioner;

import javax.annotation.Nullable;

import java.util.List;

/**
 * Swaps Flink's partitioners whose choice of channel depends on a random number or on the task's
 * history for replayable ones. The others (forward, hash, broadcast, global, custom) choose by the
 * record alone, or are left as the job defined them.
 */
@Internal
public final class CausalPartitioners {

    private CausalPartitioners() {}

    /** The outputs, with their partitioners replaced where needed (in place). */
    public static List<NonChainedOutput> replace(List<NonChainedOutput> outputs) {
        for (NonChainedOutput output : outputs) {
            StreamPartitioner<?> replacement = replacementOf(output.getPartitioner());
            if (replacement != null) {
                output.setPartitioner(replacement);
            }
        }
        return outputs;
    }

    /**
     * Tells the replayable partitioners of a task's {@code outputs} record writers their task, so
     * that their choices are the task's determinants.
     */
    public static void bind(
            RecordWriterDelegate<?> writers, int outputs, @Nullable CausalTask task) {
        for (int i = 0; i < outputs; i++) {
            RecordWriter<?> writer = writers.getRecordWriter(i);
            if (writer instanceof ChannelSelectorRecordWriter
                    && ((ChannelSelectorRecordWriter<?>) writer).getChannelSelector()
                            instanceof TaskBoundPartitioner) {
                ((TaskBoundPartitioner)
                                ((ChannelSelectorRecordWriter<?>) writer).getChannelSelector())
                        .bind(task);
            }
        }
    }

    @Nullable
    static StreamPartitioner<?> replacementOf(StreamPartitioner<?> partitioner) {
        Class<?> type = partitioner.getClass();
        if (type == RebalancePartitioner.class) {
            return CausalRoundRobinPartitioner.rebalance();
        }
        if (type == RescalePartitioner.class) {
            return CausalRoundRobinPartitioner.rescale();
        }
        if (type == ShufflePartitioner.class) {
            return new CausalShufflePartitioner<>();
        }
        return null;
    }
}
