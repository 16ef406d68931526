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
import io.clonos.runtime.causal.CorruptCausalLogException;
import io.clonos.runtime.causal.Determinant;
import io.clonos.runtime.causal.DeterminantEncoding;
import io.clonos.runtime.causal.LocalRecoveryImpossibleException;
import io.clonos.runtime.causal.ReplayFixtures;
import io.clonos.runtime.causal.TaskCausalLog;

import org.apache.flink.runtime.io.network.api.CancelCheckpointMarker;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;

import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;

import static io.clonos.runtime.network.GateItems.barrier;
import static io.clonos.runtime.network.GateItems.data;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The order of a task's input on one gate: logged while running, reproduced byte for byte while
 * replaying.
 */
class InputOrderTest {

    private static final CausalLogId LOG = ReplayFixtures.LOG;

    /** The gate's input, scripted: what the channels deliver, in the order they deliver it. */
    private static final class ScriptedInput implements InputOrder.Input {
        final Queue<BufferOrEvent> arriving = new ArrayDeque<>();
        final List<BufferOrEvent> delivered = new ArrayList<>();
        final List<Integer> resets = new ArrayList<>();

        @Override
        public Optional<BufferOrEvent> pull() {
            return Optional.ofNullable(arriving.poll());
        }

        @Override
        public void delivered(BufferOrEvent boe) {
            delivered.add(boe);
        }

        @Override
        public void resetChannel(int channel) {
            resets.add(channel);
        }
    }

    private final ScriptedInput input = new ScriptedInput();

    private static CausalTask running(int channels) {
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(LOG, 5),
                        CausalRecovery.notRecovering("task", LOG),
                        channels,
                        1,
                        -1);
        task.processingStarted();
        return task;
    }

    /** A task restored from epoch 5 whose predecessor logged {@code predecessorLog} in epoch 5. */
    private static CausalTask replaying(int channels, Determinant... predecessorLog) {
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(LOG, 5),
                        ReplayFixtures.replaying(predecessorLog),
                        channels,
                        1,
                        -1);
        task.processingStarted();
        return task;
    }

    private static List<Determinant> logged(CausalTask task) throws CorruptCausalLogException {
        List<Determinant> determinants = new ArrayList<>();
        for (var delta : task.log().deltasSince(new TaskCausalLog.Position())) {
            determinants.addAll(DeterminantEncoding.decode(delta.bytes()));
        }
        return determinants;
    }

    private static int bytes(Optional<BufferOrEvent> boe) {
        assertThat(boe).isPresent();
        assertThat(boe.get().isBuffer()).isTrue();
        return boe.get().getBuffer().readableBytes();
    }

    @Test
    void aRunningTaskTakesItsInputAsItArrivesAndLogsTheOrder() throws Exception {
        CausalTask task = running(3);
        InputOrder order =
                new InputOrder(task, "task", 0, 2, 1, new OrderInProgress(task.recovery()), input);
        input.arriving.add(data(1, 10));
        input.arriving.add(data(0, 4));
        input.arriving.add(barrier(1, 6));

        assertThat(bytes(order.pollNext())).isEqualTo(10);
        assertThat(bytes(order.pollNext())).isEqualTo(4);
        assertThat(order.pollNext().get().getEvent()).isInstanceOf(CheckpointBarrier.class);
        assertThat(order.pollNext()).isEmpty();

        // channels numbered from the gate's first channel in the task's order
        assertThat(logged(task))
                .containsExactly(
                        new Determinant.Order(2, 10),
                        new Determinant.Order(1, 4),
                        new Determinant.Order(2, 0));
        assertThat(input.delivered).hasSize(3);
    }

    @Test
    void aTaskWithOneChannelLogsNothing() throws Exception {
        CausalTask task = running(1);
        InputOrder order =
                new InputOrder(task, "task", 0, 1, 0, new OrderInProgress(task.recovery()), input);
        input.arriving.add(data(0, 4));
        assertThat(bytes(order.pollNext())).isEqualTo(4);
        assertThat(logged(task)).isEmpty();
    }

    @Test
    void aReplayHandsOutTheLoggedChannelsAndBytesWhateverArrivesFirst() throws Exception {
        CausalTask task =
                replaying(
                        2,
                        new Determinant.Order(1, 6),
                        new Determinant.Order(0, 3),
                        new Determinant.Order(1, 4));
        InputOrder order =
                new InputOrder(task, "task", 0, 2, 0, new OrderInProgress(task.recovery()), input);
        input.arriving.add(data(0, 3));
        input.arriving.add(data(1, 10));

        Optional<BufferOrEvent> first = order.pollNext();
        assertThat(bytes(first))
                .as("the predecessor read only 6 of the 10 bytes first")
                .isEqualTo(6);
        assertThat(first.get().getChannelInfo().getInputChannelIdx()).isEqualTo(1);
        Optional<BufferOrEvent> second = order.pollNext();
        assertThat(bytes(second)).isEqualTo(3);
        assertThat(second.get().getChannelInfo().getInputChannelIdx()).isEqualTo(0);
        Optional<BufferOrEvent> third = order.pollNext();
        assertThat(bytes(third)).isEqualTo(4);
        assertThat(
                        third.get()
                                .getBuffer()
                                .getMemorySegment()
                                .get(third.get().getBuffer().getMemorySegmentOffset()))
                .as("the rest starts where the first part ended")
                .isEqualTo((byte) 6);

        assertThat(task.recovery().isRunning()).as("the determinants are used up").isTrue();
        assertThat(logged(task))
                .as("the replayed choices are the task's log again")
                .containsExactly(
                        new Determinant.Order(1, 6),
                        new Determinant.Order(0, 3),
                        new Determinant.Order(1, 4));
    }

    @Test
    void noGateReadsWhileAnotherGatesDeterminantIsPartlyHandedOut() throws Exception {
        // a union of two gates: the predecessor read 10 bytes of gate 0's channel, then 5 of gate
        // 1's; the producer recovered too and regenerates gate 0's 10 bytes as buffers of 6 and 4
        CausalTask task = replaying(2, new Determinant.Order(0, 10), new Determinant.Order(1, 5));
        OrderInProgress inProgress = new OrderInProgress(task.recovery());
        ScriptedInput secondInput = new ScriptedInput();
        InputOrder first = new InputOrder(task, "task", 0, 1, 0, inProgress, input);
        InputOrder second = new InputOrder(task, "task", 1, 1, 1, inProgress, secondInput);
        input.arriving.add(data(0, 6));
        secondInput.arriving.add(data(0, 5));

        assertThat(bytes(first.pollNext())).isEqualTo(6);
        CompletableFuture<Void> changed = task.recovery().changed();
        assertThat(second.canDeliver()).as("4 bytes of gate 0's determinant are due").isFalse();
        assertThat(second.pollNext()).isEmpty();
        input.arriving.add(data(0, 4));
        assertThat(bytes(first.pollNext())).isEqualTo(4);
        assertThat(changed).as("the other gate learns that its turn came").isDone();
        assertThat(first.canDeliver()).isFalse();
        assertThat(second.canDeliver()).isTrue();
        assertThat(bytes(second.pollNext())).isEqualTo(5);
        assertThat(logged(task))
                .containsExactly(new Determinant.Order(0, 10), new Determinant.Order(1, 5));
    }

    @Test
    void aChainedSourcesTurnComesOnlyOnceTheNetworkReadBeforeItIsHandedOutWhole() throws Exception {
        // a task with a chained source (input 1): the predecessor read 10 bytes of channel 0, then
        // its source emitted a record; the producer recovered too and regenerates the 10 bytes as
        // buffers of 6 and 4
        CausalTask task =
                replaying(
                        2, new Determinant.Order(0, 10), new Determinant.SourceSplit(1, "split-0"));
        OrderInProgress inProgress = new OrderInProgress(task.recovery());
        InputOrder gate = new InputOrder(task, "task", 0, 2, 0, inProgress, input);
        input.arriving.add(data(0, 6));

        assertThat(bytes(gate.pollNext())).isEqualTo(6);
        assertThat(task.recovery().peek(Determinant.SourceSplit.class))
                .as("the next determinant is the source's")
                .isNotNull();
        assertThat(inProgress.isOpen())
                .as("but 4 bytes of the read come first: the source must not emit yet")
                .isTrue();
        CompletableFuture<Void> changed = task.recovery().changed();
        input.arriving.add(data(0, 4));
        assertThat(bytes(gate.pollNext())).isEqualTo(4);
        assertThat(inProgress.isOpen()).isFalse();
        assertThat(changed).as("the source learns that its turn came").isDone();
    }

    @Test
    void aReplayWaitsForTheChannelWhoseTurnItIs() throws Exception {
        CausalTask task = replaying(2, new Determinant.Order(1, 5), new Determinant.Order(0, 5));
        InputOrder order =
                new InputOrder(task, "task", 0, 2, 0, new OrderInProgress(task.recovery()), input);
        input.arriving.add(data(0, 5));

        assertThat(order.pollNext()).as("channel 1 has nothing yet").isEmpty();
        assertThat(order.canDeliver()).isFalse();
        input.arriving.add(data(1, 5));
        assertThat(order.pollNext().get().getChannelInfo().getInputChannelIdx()).isEqualTo(1);
        assertThat(order.canDeliver()).as("channel 0's data waits in its queue").isTrue();
        assertThat(order.pollNext().get().getChannelInfo().getInputChannelIdx()).isEqualTo(0);
    }

    @Test
    void anEventWhereThePredecessorReadDataIsADivergence() {
        CausalTask task = replaying(2, new Determinant.Order(0, 5));
        InputOrder order =
                new InputOrder(task, "task", 0, 2, 0, new OrderInProgress(task.recovery()), input);
        input.arriving.add(barrier(0, 6));
        assertThatThrownBy(order::pollNext)
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("where its predecessor read 5 more bytes of data");
    }

    @Test
    void dataWhereThePredecessorReadAnEventIsADivergence() {
        CausalTask task = replaying(2, new Determinant.Order(0, 0));
        InputOrder order =
                new InputOrder(task, "task", 0, 2, 0, new OrderInProgress(task.recovery()), input);
        input.arriving.add(data(0, 5));
        assertThatThrownBy(order::pollNext)
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining(
                        "replays data on channel 0 where its predecessor read an event");
    }

    @Test
    void aBarrierOfACheckpointTriggeredDuringTheRecoveryWaitsForTheEndOfTheReplay()
            throws Exception {
        // one channel: no order to replay, but a random seed the task has yet to ask for
        CausalTask task = replaying(1, new Determinant.RandomSeed(42));
        InputOrder order =
                new InputOrder(task, "task", 0, 1, 0, new OrderInProgress(task.recovery()), input);
        input.arriving.add(barrier(0, 9));

        assertThat(order.pollNext()).as("the predecessor never saw checkpoint 9").isEmpty();
        assertThat(order.canDeliver()).isFalse();

        assertThat(task.recovery().next(Determinant.RandomSeed.class))
                .isEqualTo(new Determinant.RandomSeed(42));
        assertThat(task.recovery().isRunning()).isTrue();
        assertThat(order.canDeliver()).isTrue();
        Optional<BufferOrEvent> barrier = order.pollNext();
        assertThat(((CheckpointBarrier) barrier.get().getEvent()).getId()).isEqualTo(9);
    }

    @Test
    void aBarrierOfAReplayedEpochIsHandedOutDuringTheReplay() throws Exception {
        CausalTask task = replaying(1, new Determinant.RandomSeed(42));
        InputOrder order =
                new InputOrder(task, "task", 0, 1, 0, new OrderInProgress(task.recovery()), input);
        input.arriving.add(barrier(0, 5));
        assertThat(((CheckpointBarrier) order.pollNext().get().getEvent()).getId()).isEqualTo(5);
        assertThat(task.recovery().isReplaying()).isTrue();
    }

    @Test
    void anAlignmentCancelledByTheGateIsLoggedAndCancelledAgainAtTheSamePoint() throws Exception {
        CausalTask task = running(2);
        InputOrder order =
                new InputOrder(task, "task", 0, 2, 0, new OrderInProgress(task.recovery()), input);
        order.injected(GateItems.event(1, new CancelCheckpointMarker(8)));
        assertThat(logged(task)).containsExactly(new Determinant.AlignmentCancelled(1, 8));

        CausalTask recovered =
                replaying(
                        2,
                        new Determinant.Order(0, 5),
                        new Determinant.AlignmentCancelled(1, 8),
                        new Determinant.Order(0, 5));
        InputOrder replay =
                new InputOrder(
                        recovered,
                        "task",
                        0,
                        2,
                        0,
                        new OrderInProgress(recovered.recovery()),
                        input);
        input.arriving.add(data(0, 5));
        input.arriving.add(data(0, 5));
        assertThat(bytes(replay.pollNext())).isEqualTo(5);
        Optional<BufferOrEvent> cancelled = replay.pollNext();
        assertThat(cancelled.get().getEvent()).isEqualTo(new CancelCheckpointMarker(8));
        assertThat(cancelled.get().getChannelInfo().getInputChannelIdx()).isEqualTo(1);
        assertThat(bytes(replay.pollNext())).isEqualTo(5);
    }

    @Test
    void whereARestartedStreamBeginsThePartialRecordOfTheOldOneIsDropped() throws Exception {
        CausalTask task = running(2);
        InputOrder order =
                new InputOrder(task, "task", 0, 2, 0, new OrderInProgress(task.recovery()), input);
        input.arriving.add(data(1, 3));
        assertThat(bytes(order.pollNext())).isEqualTo(3);
        assertThat(input.resets).isEmpty();

        order.streamRestarts(1);
        input.arriving.add(data(1, 7));
        assertThat(bytes(order.pollNext())).isEqualTo(7);
        assertThat(input.resets).containsExactly(1);
    }
}
