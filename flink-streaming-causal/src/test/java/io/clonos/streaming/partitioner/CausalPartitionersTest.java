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

import io.clonos.runtime.causal.CausalLogId;
import io.clonos.runtime.causal.CausalRecovery;
import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.RecoveryDeadlines;
import io.clonos.runtime.causal.SharedDelta;
import io.clonos.runtime.causal.TaskCausalLog;

import org.apache.flink.streaming.runtime.partitioner.ForwardPartitioner;
import org.apache.flink.streaming.runtime.partitioner.RebalancePartitioner;
import org.apache.flink.streaming.runtime.partitioner.RescalePartitioner;
import org.apache.flink.streaming.runtime.partitioner.ShufflePartitioner;
import org.apache.flink.streaming.runtime.partitioner.StreamPartitioner;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Partitioners that choose by chance or by history send a recovered task's records where its
 * predecessor sent them.
 */
class CausalPartitionersTest {

    private static final CausalLogId LOG = CausalLogId.main("vertex", 0);
    private static final int CHANNELS = 7;

    /** Two epochs of records through a fresh partitioner of {@code task}, on its thread. */
    private static List<Integer> channels(CausalTask task, StreamPartitioner<Object> partitioner) {
        task.processingStarted();
        ((TaskBoundPartitioner) partitioner).bind(task);
        partitioner.setup(CHANNELS);
        List<Integer> channels = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            channels.add(partitioner.selectChannel(null));
        }
        task.epochStarted(4);
        for (int i = 0; i < 20; i++) {
            channels.add(partitioner.selectChannel(null));
        }
        return channels;
    }

    private static void replaysItsPredecessorsChannels(
            Supplier<StreamPartitioner<Object>> partitioners) {
        CausalTask predecessor =
                new CausalTask(
                        new TaskCausalLog(LOG, 3),
                        CausalRecovery.notRecovering("task", LOG),
                        1,
                        1,
                        -1);
        List<Integer> original = channels(predecessor, partitioners.get());
        assertThat(original).as("records spread over the channels").hasSize(40);

        List<SharedDelta> deltas = new ArrayList<>();
        predecessor
                .log()
                .deltasSince(new TaskCausalLog.Position())
                .forEach(delta -> deltas.add(new SharedDelta(delta, 1)));
        CausalRecovery recovery =
                CausalRecovery.recovering(
                        "task", LOG, 3, 1, Duration.ofMinutes(1), new RecoveryDeadlines("test"));
        recovery.consumerConnected(0);
        recovery.determinantsReceived(0, deltas, () -> {});
        CausalTask recovered = new CausalTask(new TaskCausalLog(LOG, 3), recovery, 1, 1, -1);

        assertThat(channels(recovered, partitioners.get())).isEqualTo(original);
        assertThat(recovery.isRunning()).as("every logged seed was used").isTrue();
    }

    @Test
    void rebalanceReplaysItsPredecessorsChannels() {
        replaysItsPredecessorsChannels(CausalRoundRobinPartitioner::rebalance);
    }

    @Test
    void rescaleReplaysItsPredecessorsChannels() {
        replaysItsPredecessorsChannels(CausalRoundRobinPartitioner::rescale);
    }

    @Test
    void shuffleReplaysItsPredecessorsChannels() {
        replaysItsPredecessorsChannels(CausalShufflePartitioner::new);
    }

    @Test
    void onlyPartitionersThatChooseByChanceOrHistoryAreReplaced() {
        assertThat(CausalPartitioners.replacementOf(new RebalancePartitioner<>()))
                .isInstanceOf(CausalRoundRobinPartitioner.class)
                .matches(p -> !p.isPointwise());
        assertThat(CausalPartitioners.replacementOf(new RescalePartitioner<>()))
                .isInstanceOf(CausalRoundRobinPartitioner.class)
                .matches(StreamPartitioner::isPointwise);
        assertThat(CausalPartitioners.replacementOf(new ShufflePartitioner<>()))
                .isInstanceOf(CausalShufflePartitioner.class);
        assertThat(CausalPartitioners.replacementOf(new ForwardPartitioner<>())).isNull();
    }
}
