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
import io.clonos.runtime.causal.EpochRandom;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.api.writer.SubtaskStateMapper;
import org.apache.flink.runtime.plugable.SerializationDelegate;
import org.apache.flink.streaming.runtime.partitioner.StreamPartitioner;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import javax.annotation.Nullable;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Flink's rebalance (all channels) and rescale (the channels of a pointwise connection)
 * partitioners, made replayable. Flink's rebalance starts at a random channel and both go round
 * from wherever the task is; a recovered task starts afresh and would send its records to other
 * channels than its predecessor did. This one starts every epoch of its task at a channel drawn
 * from the epoch's logged random seed ({@link EpochRandom}), so the channel of every record follows
 * from the epoch and the record's position in it. Without causal logging it behaves like Flink's.
 */
@Internal
public final class CausalRoundRobinPartitioner<T> extends StreamPartitioner<T>
        implements TaskBoundPartitioner {

    private static final long serialVersionUID = 1L;

    private final boolean pointwise;
    @Nullable private transient CausalTask boundTask;
    @Nullable private transient EpochRandom random;
    private transient long epoch = Long.MIN_VALUE;
    private int nextChannel = -1;

    private CausalRoundRobinPartitioner(boolean pointwise) {
        this.pointwise = pointwise;
    }

    /** Replaces {@code rebalance()}. */
    public static <T> CausalRoundRobinPartitioner<T> rebalance() {
        return new CausalRoundRobinPartitioner<>(false);
    }

    /** Replaces {@code rescale()}. */
    public static <T> CausalRoundRobinPartitioner<T> rescale() {
        return new CausalRoundRobinPartitioner<>(true);
    }

    @Override
    public void bind(@Nullable CausalTask task) {
        this.boundTask = task;
    }

    @Override
    public int selectChannel(SerializationDelegate<StreamRecord<T>> record) {
        CausalTask task = TaskBoundPartitioner.processing(boundTask);
        if (task != null && task.log().currentEpoch() != epoch) {
            if (random == null) {
                random = new EpochRandom(task);
            }
            epoch = task.log().currentEpoch();
            nextChannel = random.nextInt(numberOfChannels);
        } else if (nextChannel < 0) {
            nextChannel = pointwise ? 0 : ThreadLocalRandom.current().nextInt(numberOfChannels);
        } else {
            nextChannel = (nextChannel + 1) % numberOfChannels;
        }
        return nextChannel;
    }

    @Override
    public SubtaskStateMapper getDownstreamSubtaskStateMapper() {
        return pointwise ? SubtaskStateMapper.UNSUPPORTED : SubtaskStateMapper.ROUND_ROBIN;
    }

    @Override
    public SubtaskStateMapper getUpstreamSubtaskStateMapper() {
        return pointwise ? SubtaskStateMapper.UNSUPPORTED : super.getUpstreamSubtaskStateMapper();
    }

    @Override
    public StreamPartitioner<T> copy() {
        return new CausalRoundRobinPartitioner<>(pointwise);
    }

    @Override
    public boolean isPointwise() {
        return pointwise;
    }

    @Override
    public String toString() {
        return pointwise ? "RESCALE" : "REBALANCE";
    }
}
