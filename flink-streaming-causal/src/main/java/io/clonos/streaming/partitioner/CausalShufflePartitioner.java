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

/**
 * Flink's {@code shuffle()} partitioner, made replayable: the channel of every record is drawn from
 * a generator seeded by the epoch's logged random seed ({@link EpochRandom}), so a recovered task
 * sends each record where its predecessor did.
 */
@Internal
public final class CausalShufflePartitioner<T> extends StreamPartitioner<T>
        implements TaskBoundPartitioner {

    private static final long serialVersionUID = 1L;

    @Nullable private transient EpochRandom random;
    @Nullable private transient CausalTask task;
    @Nullable private transient CausalTask boundTask;

    @Override
    public void bind(@Nullable CausalTask task) {
        this.boundTask = task;
    }

    @Override
    public int selectChannel(SerializationDelegate<StreamRecord<T>> record) {
        CausalTask current = TaskBoundPartitioner.processing(boundTask);
        if (random == null || task != current) {
            task = current;
            random = new EpochRandom(current);
        }
        return random.nextInt(numberOfChannels);
    }

    @Override
    public SubtaskStateMapper getDownstreamSubtaskStateMapper() {
        return SubtaskStateMapper.ROUND_ROBIN;
    }

    @Override
    public StreamPartitioner<T> copy() {
        return new CausalShufflePartitioner<>();
    }

    @Override
    public boolean isPointwise() {
        return false;
    }

    @Override
    public String toString() {
        return "SHUFFLE";
    }
}
