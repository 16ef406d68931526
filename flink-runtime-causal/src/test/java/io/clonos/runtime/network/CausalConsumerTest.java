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
import io.clonos.runtime.causal.Determinant;
import io.clonos.runtime.causal.SharedDelta;
import io.clonos.runtime.causal.TaskCausalLog;
import io.clonos.runtime.causal.TestDeadlines;

import org.apache.flink.runtime.event.TaskEvent;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.clonos.runtime.network.GateItems.barrier;
import static io.clonos.runtime.network.GateItems.data;
import static io.clonos.runtime.network.GateItems.event;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A gate's part in the causal protocol as a consumer: what it holds, and how it answers producers.
 */
class CausalConsumerTest {

    private static final CausalLogId OWN = CausalLogId.main("consumer", 0);
    private static final CausalLogId UPSTREAM = CausalLogId.main("producer", 1);

    /** The producers of the gate's channels: what was sent to which, and whether one is there. */
    private static final class Producers implements CausalConsumer.Producers {
        final List<TaskEvent> sent = new ArrayList<>();
        final List<Integer> sentTo = new ArrayList<>();
        boolean gone;

        @Override
        public boolean send(int channel, TaskEvent event) {
            if (gone) {
                return false;
            }
            sentTo.add(channel);
            sent.add(event);
            return true;
        }

        @Override
        public int subpartition(int channel) {
            return 10 + channel;
        }
    }

    private final Producers producers = new Producers();
    private final List<Integer> restarts = new ArrayList<>();

    private CausalConsumer consumer(CausalTask task) {
        return new CausalConsumer(task, "consumer", 2, 5, producers, restarts::add);
    }

    private static CausalTask running() {
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(OWN, 5),
                        CausalRecovery.notRecovering("consumer", OWN),
                        2,
                        1,
                        -1);
        task.processingStarted();
        return task;
    }

    /** The producer's piggybacked log: {@code determinants} of its epoch 5. */
    private static CausalLogDeltaEvent piggybacked(Determinant... determinants) {
        TaskCausalLog log = new TaskCausalLog(UPSTREAM, 5);
        for (Determinant determinant : determinants) {
            log.append(determinant);
        }
        List<SharedDelta> deltas = new ArrayList<>();
        log.deltasSince(new TaskCausalLog.Position())
                .forEach(delta -> deltas.add(new SharedDelta(delta, 1)));
        return new CausalLogDeltaEvent(deltas);
    }

    private DeterminantResponseEvent lastAnswer() {
        assertThat(producers.sent).isNotEmpty();
        return (DeterminantResponseEvent) producers.sent.get(producers.sent.size() - 1);
    }

    @Test
    void aNewConnectionIsAnsweredWithTheHeldLogAndTheBytesReceivedPerEpoch() throws Exception {
        CausalTask task = running();
        CausalConsumer consumer = consumer(task);
        assertThat(consumer.accept(event(0, piggybacked(new Determinant.RandomSeed(7))), 0))
                .as("the log is not input")
                .isFalse();
        assertThat(consumer.accept(data(0, 100), 0)).isTrue();
        assertThat(consumer.accept(barrier(0, 6), 0)).isTrue();
        assertThat(consumer.accept(data(0, 30), 0)).isTrue();
        assertThat(consumer.accept(data(1, 999), 1)).as("another channel's").isTrue();

        // the producer of channel 0 is restarted and replays
        assertThat(consumer.accept(event(0, new ReplayStartEvent(5)), 0)).isTrue();

        assertThat(producers.sentTo).containsExactly(0);
        DeterminantResponseEvent answer = lastAnswer();
        assertThat(answer.subpartition()).isEqualTo(10);
        assertThat(answer.deliveredBytesFrom(5)).isEqualTo(130);
        assertThat(answer.deliveredBytesFrom(6)).isEqualTo(30);
        assertThat(answer.deltas())
                .extracting(shared -> shared.delta().log())
                .containsOnly(UPSTREAM)
                .isNotEmpty();
        assertThat(answer.consumerReplays()).isFalse();
    }

    @Test
    void aCompletedCheckpointDropsTheCountsOfEarlierEpochs() throws Exception {
        CausalConsumer consumer = consumer(running());
        consumer.accept(data(0, 100), 0);
        consumer.accept(barrier(0, 6), 0);
        consumer.accept(data(0, 30), 0);
        consumer.truncateBefore(6);
        consumer.accept(event(0, new ReplayStartEvent(6)), 0);
        assertThat(lastAnswer().deliveredBytesFrom(0)).isEqualTo(30);
    }

    @Test
    void dataOfAnEpochThatWasTruncatedOrOfAFreshStreamIsCountedAnew() throws Exception {
        CausalConsumer consumer = consumer(running());
        consumer.accept(data(0, 100), 0);
        // the checkpoint completed while channel 0 is still in epoch 5
        consumer.truncateBefore(6);
        consumer.accept(data(0, 40), 0);
        consumer.accept(event(0, new ReplayStartEvent(5)), 0);
        assertThat(lastAnswer().deliveredBytesFrom(5))
                .as("what came after the truncation, counted for epoch 5 again")
                .isEqualTo(40);

        consumer.producerLost(0);
        consumer.accept(event(0, new ContinuedStreamEvent(ContinuedStreamEvent.FRESH)), 0);
        consumer.accept(data(0, 25), 0);
        consumer.accept(event(0, new ReplayStartEvent(ReplayStartEvent.FROM_PRODUCER_START)), 0);
        assertThat(lastAnswer().deliveredBytesFrom(0))
                .as("the fresh stream's data only")
                .isEqualTo(25);
    }

    @Test
    void aRecoveringConsumerAnswersOnceItHasItsOwnDeterminantsAndSaysWhenItsReplayEnds()
            throws Exception {
        CausalRecovery recovery =
                CausalRecovery.recovering(
                        "consumer", OWN, 5, 1, Duration.ofMinutes(1), TestDeadlines.INSTANCE);
        CausalTask task = new CausalTask(new TaskCausalLog(OWN, 5), recovery, 2, 1, -1);
        task.processingStarted();
        CausalConsumer consumer = consumer(task);

        consumer.accept(event(1, new ReplayStartEvent(5)), 1);
        assertThat(producers.sent)
                .as("its own determinants may come with logs the producer needs")
                .isEmpty();
        assertThat(consumer.hasUnanswered()).isTrue();
        consumer.answerWaitingProducers();
        assertThat(producers.sent).isEmpty();

        TaskCausalLog predecessor = new TaskCausalLog(OWN, 5);
        predecessor.append(new Determinant.RandomSeed(3));
        List<SharedDelta> deltas = new ArrayList<>();
        predecessor
                .deltasSince(new TaskCausalLog.Position())
                .forEach(delta -> deltas.add(new SharedDelta(delta, 1)));
        recovery.consumerConnected(0);
        recovery.determinantsReceived(0, deltas, () -> {});
        assertThat(recovery.isReplaying()).isTrue();

        consumer.answerWaitingProducers();
        assertThat(consumer.hasUnanswered()).isFalse();
        assertThat(producers.sentTo).containsExactly(1);
        assertThat(lastAnswer().consumerReplays()).isTrue();

        recovery.next(Determinant.RandomSeed.class);
        assertThat(recovery.isRunning()).isTrue();
        assertThat(producers.sent).hasSize(2);
        assertThat(producers.sent.get(1)).isInstanceOf(ReplayEndEvent.class);
        assertThat(producers.sentTo).containsExactly(1, 1);
    }

    @Test
    void aProducerThatStartsAFreshStreamGetsNothingOfItsPredecessors() throws Exception {
        CausalTask task = running();
        CausalConsumer consumer = consumer(task);
        consumer.accept(event(0, piggybacked(new Determinant.RandomSeed(7))), 0);
        consumer.accept(data(0, 100), 0);
        assertThat(task.held().all(UPSTREAM)).isNotEmpty();

        consumer.producerLost(0);
        assertThat(
                        consumer.accept(
                                event(0, new ContinuedStreamEvent(ContinuedStreamEvent.FRESH)), 0))
                .isFalse();
        assertThat(task.held().all(UPSTREAM)).isEmpty();
        consumer.accept(event(0, new ReplayStartEvent(ReplayStartEvent.FROM_PRODUCER_START)), 0);
        assertThat(lastAnswer().deliveredBytesFrom(0)).isZero();
        assertThat(lastAnswer().deltas()).isEmpty();
    }

    @Test
    void theFirstDataOfARestartedStreamDropsThePartialRecordUnlessTheStreamContinues()
            throws Exception {
        CausalConsumer consumer = consumer(running());
        consumer.producerLost(0);
        consumer.producerLost(1);
        assertThat(consumer.accept(event(1, new ContinuedStreamEvent(40)), 1)).isFalse();

        consumer.accept(data(0, 10), 0);
        consumer.accept(data(1, 10), 1);
        consumer.accept(data(0, 10), 0);
        assertThat(restarts)
                .as("once, where channel 0's new stream starts; channel 1 continues its old one")
                .containsExactly(0);
    }

    @Test
    void aProducerGoneAgainIsNotAnswered() throws Exception {
        CausalConsumer consumer = consumer(running());
        producers.gone = true;
        assertThat(consumer.accept(event(0, new ReplayStartEvent(5)), 0)).isTrue();
        assertThat(producers.sent).isEmpty();
        assertThat(consumer.hasUnanswered()).as("its next attempt asks anew").isFalse();
    }
}
