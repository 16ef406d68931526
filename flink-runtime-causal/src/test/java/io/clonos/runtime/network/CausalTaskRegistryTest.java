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
import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.RecoveryState;
import io.clonos.runtime.causal.TaskCausalLog;
import io.clonos.runtime.causal.TestDeadlines;
import io.clonos.runtime.inflightlog.InMemoryInFlightLog;

import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.iterative.event.TerminationEvent;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** How connections and answers reach a producing task, whenever they arrive. */
class CausalTaskRegistryTest {

    /** One TaskManager's. */
    private final ClonosNetworkContext network = new ClonosNetworkContext("test");

    private static final CausalLogId LOG = CausalLogId.main("vertex", 0);

    private static CausalTask recoveringTask(int consumers) {
        CausalRecovery recovery =
                CausalRecovery.recovering(
                        "producer",
                        LOG,
                        3,
                        consumers,
                        Duration.ofMinutes(1),
                        TestDeadlines.INSTANCE);
        return new CausalTask(new TaskCausalLog(LOG, 3), recovery, 0, 1, -1);
    }

    private static DeterminantResponseEvent answer(int subpartition) {
        return answer(subpartition, false);
    }

    private static DeterminantResponseEvent answer(int subpartition, boolean consumerReplays) {
        return new DeterminantResponseEvent(
                subpartition, Map.of(), new ArrayList<>(List.of()), consumerReplays);
    }

    @Test
    void whatArrivesBeforeTheTaskRegistersReachesItWhenItDoes() {
        ResultPartitionID partition = new ResultPartitionID();
        network.causalTasks().partitionRegistered(partition);
        // the consumer connects and answers while the producer's task is still being built
        network.causalTasks().consumerConnected(partition, 0);
        network.causalTasks().answered(partition, answer(0));

        CausalTask task = recoveringTask(1);
        assertThat(task.recovery().state()).isEqualTo(RecoveryState.WAITING_FOR_CONNECTIONS);
        network.causalTasks().register(partition, task, 0, 3);
        try {
            assertThat(task.recovery().isWaiting()).isFalse();
            assertThat(network.causalTasks().of(partition)).isSameAs(task);
        } finally {
            network.causalTasks().unregister(partition);
        }
    }

    @Test
    void answersThroughTheTaskEventPublisherReachTheTaskAndOthersGoToFlink() {
        ResultPartitionID partition = new ResultPartitionID();
        network.causalTasks().partitionRegistered(partition);
        CausalTask task = recoveringTask(2);
        network.causalTasks().register(partition, task, 0, 3);
        List<Object> toFlink = new ArrayList<>();
        var publisher = network.causalTasks().routingAnswers((p, event) -> toFlink.add(event));
        try {
            network.causalTasks().consumerConnected(partition, 0);
            network.causalTasks().consumerConnected(partition, 1);
            assertThat(publisher.publish(partition, answer(0))).isTrue();
            assertThat(task.recovery().state()).isEqualTo(RecoveryState.WAITING_FOR_DETERMINANTS);
            assertThat(publisher.publish(partition, answer(1))).isTrue();
            assertThat(task.recovery().isWaiting()).isFalse();
            assertThat(toFlink).isEmpty();

            assertThat(publisher.publish(partition, TerminationEvent.INSTANCE)).isTrue();
            assertThat(toFlink).containsExactly(TerminationEvent.INSTANCE);
        } finally {
            network.causalTasks().unregister(partition);
        }
    }

    /**
     * A recovered source and its consumer lost together: the source runs freely once answered, but
     * a new checkpoint barrier must not enter the stream the consumer still replays.
     */
    @Test
    void aReplayingConsumerHoldsFreshEpochsOfItsProducerUntilItsReplayEnds() throws Exception {
        ResultPartitionID partition = new ResultPartitionID();
        network.causalTasks().partitionRegistered(partition);
        LoggingSubpartition subpartition =
                new LoggingSubpartition(
                        network,
                        partition,
                        0,
                        new InMemoryInFlightLog(ReplayStartEvent.FROM_PRODUCER_START, 1 << 20),
                        new SubpartitionLogMetrics(),
                        Long.MAX_VALUE);
        network.subpartitionLogs().register(partition, 0, subpartition);
        subpartition.attach(view -> {});
        CausalTask task = recoveringTask(1);
        network.causalTasks().register(partition, task, 0, 3);
        var publisher =
                network.causalTasks()
                        .routingAnswers(
                                (p, event) -> {
                                    throw new AssertionError("not Flink's: " + event);
                                });
        try {
            // attaching the subpartition connected the consumer
            publisher.publish(partition, answer(0, true));
            assertThat(task.recovery().isRunning())
                    .as("no determinants: the producer runs at once")
                    .isTrue();
            assertThat(network.subpartitionLogs().regeneratesPredecessorStream(partition)).isTrue();

            publisher.publish(partition, new ReplayEndEvent(0));
            assertThat(network.subpartitionLogs().regeneratesPredecessorStream(partition))
                    .isFalse();
        } finally {
            network.causalTasks().unregister(partition);
            network.subpartitionLogs().remove(partition);
        }
    }

    @Test
    void aConsumerThatDoesNotReplayHoldsNothing() throws Exception {
        ResultPartitionID partition = new ResultPartitionID();
        network.causalTasks().partitionRegistered(partition);
        LoggingSubpartition subpartition =
                new LoggingSubpartition(
                        network,
                        partition,
                        0,
                        new InMemoryInFlightLog(ReplayStartEvent.FROM_PRODUCER_START, 1 << 20),
                        new SubpartitionLogMetrics(),
                        Long.MAX_VALUE);
        network.subpartitionLogs().register(partition, 0, subpartition);
        subpartition.attach(view -> {});
        CausalTask task = recoveringTask(1);
        network.causalTasks().register(partition, task, 0, 3);
        try {
            network.causalTasks().answered(partition, answer(0, false));
            assertThat(task.recovery().isRunning()).isTrue();
            assertThat(network.subpartitionLogs().regeneratesPredecessorStream(partition))
                    .isFalse();
        } finally {
            network.causalTasks().unregister(partition);
            network.subpartitionLogs().remove(partition);
        }
    }

    @Test
    void theAnswerSaysOnTheWireWhetherTheConsumerReplays() throws Exception {
        for (boolean replays : new boolean[] {true, false}) {
            DataOutputSerializer out = new DataOutputSerializer(64);
            answer(2, replays).write(out);
            DeterminantResponseEvent read = new DeterminantResponseEvent();
            read.read(new DataInputDeserializer(out.getCopyOfBuffer()));
            assertThat(read.consumerReplays()).isEqualTo(replays);
            assertThat(read.subpartition()).isEqualTo(2);
        }
        DataOutputSerializer out = new DataOutputSerializer(8);
        new ReplayEndEvent(3).write(out);
        ReplayEndEvent end = new ReplayEndEvent();
        end.read(new DataInputDeserializer(out.getCopyOfBuffer()));
        assertThat(end).isEqualTo(new ReplayEndEvent(3));
    }

    @Test
    void twoTaskManagersInOneJvmShareNothing() {
        ClonosNetworkContext other = new ClonosNetworkContext("test");
        ResultPartitionID partition = new ResultPartitionID();
        network.causalTasks().partitionRegistered(partition);
        CausalTask task = recoveringTask(1);
        network.causalTasks().register(partition, task, 0, 3);

        other.causalTasks().partitionRegistered(partition);
        other.causalTasks().consumerConnected(partition, 0);
        other.causalTasks().answered(partition, answer(0));
        assertThat(task.recovery().state())
                .as("what reached the other TaskManager")
                .isEqualTo(RecoveryState.WAITING_FOR_CONNECTIONS);
        assertThat(other.causalTasks().of(partition)).isNull();

        network.causalTasks().consumerConnected(partition, 0);
        network.causalTasks().answered(partition, answer(0));
        assertThat(task.recovery().isRunning()).isTrue();
    }

    @Test
    void partitionsOfAttemptsThatStartAfreshAreToldOnce() {
        ResultPartitionID partition = new ResultPartitionID();
        network.partitionStartsFresh(partition);

        assertThat(new ClonosNetworkContext("test").startsFresh(List.of(partition)))
                .as("another TaskManager")
                .isFalse();
        assertThat(network.startsFresh(List.of(new ResultPartitionID(), partition))).isTrue();
        assertThat(network.startsFresh(List.of(partition))).as("forgotten once read").isFalse();
    }

    @Test
    void aReleasedPartitionDropsWhatWaitedForItsTask() {
        ResultPartitionID partition = new ResultPartitionID();
        network.causalTasks().partitionRegistered(partition);
        network.causalTasks().consumerConnected(partition, 0);
        network.causalTasks().partitionReleased(partition);

        CausalTask task = recoveringTask(1);
        network.causalTasks().register(partition, task, 0, 3);
        try {
            assertThat(task.recovery().state()).isEqualTo(RecoveryState.WAITING_FOR_CONNECTIONS);
        } finally {
            network.causalTasks().unregister(partition);
        }
    }
}
