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

package io.clonos.runtime.network;

import io.clonos.runtime.causal.CausalLogId;
import io.clonos.runtime.causal.CausalRecovery;
import io.clonos.runtime.causal.CausalRecovery.State;
import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.TaskCausalLog;

import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.iterative.event.TerminationEvent;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** How connections and answers reach a producing task, whenever they arrive. */
class CausalTasksTest {

    private static final CausalLogId LOG = CausalLogId.main("vertex", 0);

    private static CausalTask recoveringTask(int consumers) {
        CausalRecovery recovery = CausalRecovery.recovering("producer", LOG, 3, consumers, Duration.ofMinutes(1));
        return new CausalTask(new TaskCausalLog(LOG, 3), recovery, 0, 1, -1);
    }

    private static DeterminantResponseEvent answer(int subpartition) {
        return new DeterminantResponseEvent(subpartition, Map.of(), new ArrayList<>(List.of()));
    }

    @Test
    void whatArrivesBeforeTheTaskRegistersReachesItWhenItDoes() {
        ResultPartitionID partition = new ResultPartitionID();
        CausalTasks.partitionRegistered(partition);
        // the consumer connects and answers while the producer's task is still being built
        CausalTasks.consumerConnected(partition, 0);
        CausalTasks.answered(partition, answer(0));

        CausalTask task = recoveringTask(1);
        assertThat(task.recovery().state()).isEqualTo(State.WAITING_FOR_CONNECTIONS);
        CausalTasks.register(partition, task, 0, 3);
        try {
            assertThat(task.recovery().isWaiting()).isFalse();
            assertThat(CausalTasks.of(partition)).isSameAs(task);
        } finally {
            CausalTasks.unregister(partition);
        }
    }

    @Test
    void answersThroughTheTaskEventPublisherReachTheTaskAndOthersGoToFlink() {
        ResultPartitionID partition = new ResultPartitionID();
        CausalTasks.partitionRegistered(partition);
        CausalTask task = recoveringTask(2);
        CausalTasks.register(partition, task, 0, 3);
        List<Object> toFlink = new ArrayList<>();
        var publisher = CausalTasks.routingAnswers((p, event) -> toFlink.add(event));
        try {
            CausalTasks.consumerConnected(partition, 0);
            CausalTasks.consumerConnected(partition, 1);
            assertThat(publisher.publish(partition, answer(0))).isTrue();
            assertThat(task.recovery().state()).isEqualTo(State.WAITING_FOR_DETERMINANTS);
            assertThat(publisher.publish(partition, answer(1))).isTrue();
            assertThat(task.recovery().isWaiting()).isFalse();
            assertThat(toFlink).isEmpty();

            assertThat(publisher.publish(partition, TerminationEvent.INSTANCE)).isTrue();
            assertThat(toFlink).containsExactly(TerminationEvent.INSTANCE);
        } finally {
            CausalTasks.unregister(partition);
        }
    }

    @Test
    void aReleasedPartitionDropsWhatWaitedForItsTask() {
        ResultPartitionID partition = new ResultPartitionID();
        CausalTasks.partitionRegistered(partition);
        CausalTasks.consumerConnected(partition, 0);
        CausalTasks.partitionReleased(partition);

        CausalTask task = recoveringTask(1);
        CausalTasks.register(partition, task, 0, 3);
        try {
            assertThat(task.recovery().state()).isEqualTo(State.WAITING_FOR_CONNECTIONS);
        } finally {
            CausalTasks.unregister(partition);
        }
    }
}
