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

package io.clonos.runtime.causal;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The recovery state machine, one transition at a time, and the replay by determinants. */
class CausalRecoveryTest {

    private static final CausalLogId LOG = CausalLogId.main("vertex", 0);
    private static final Duration TIMEOUT = Duration.ofMinutes(1);

    /**
     * The deltas a consumer would send: the given determinants per epoch, as the task logged them.
     */
    private static List<SharedDelta> logged(long epoch, Determinant... determinants) {
        TaskCausalLog log = new TaskCausalLog(LOG, epoch);
        for (Determinant d : determinants) {
            log.append(d);
        }
        List<SharedDelta> shared = new ArrayList<>();
        log.deltasSince(new TaskCausalLog.Position())
                .forEach(delta -> shared.add(new SharedDelta(delta, 1)));
        return shared;
    }

    @Test
    void aTaskThatIsNotRecoveringRunsAtOnce() {
        CausalRecovery recovery = CausalRecovery.notRecovering("task", LOG);
        assertThat(recovery.state()).isEqualTo(RecoveryState.RUNNING);
        assertThat(recovery.next(Determinant.Timestamp.class)).as("fresh choices").isNull();
    }

    @Test
    void aSinkHasNobodyToWaitFor() {
        assertThat(
                        CausalRecovery.recovering(
                                        "sink", LOG, 3, 0, TIMEOUT, TestDeadlines.INSTANCE)
                                .state())
                .isEqualTo(RecoveryState.RUNNING);
    }

    @Test
    void waitsForConnectionsThenForDeterminantsThenReplaysThenRuns() {
        CausalRecovery recovery =
                CausalRecovery.recovering("task", LOG, 5, 2, TIMEOUT, TestDeadlines.INSTANCE);
        CompletableFuture<Void> changed = recovery.changed();
        assertThat(recovery.state()).isEqualTo(RecoveryState.WAITING_FOR_CONNECTIONS);
        assertThat(recovery.isWaiting()).isTrue();

        recovery.consumerConnected(0);
        assertThat(recovery.state()).isEqualTo(RecoveryState.WAITING_FOR_CONNECTIONS);
        recovery.consumerConnected(1);
        assertThat(recovery.state()).isEqualTo(RecoveryState.WAITING_FOR_DETERMINANTS);
        assertThat(changed).isDone();

        AtomicInteger accepted = new AtomicInteger();
        assertThat(
                        recovery.determinantsReceived(
                                0,
                                logged(5, new Determinant.Timestamp(42)),
                                accepted::incrementAndGet))
                .isTrue();
        assertThat(recovery.state()).isEqualTo(RecoveryState.WAITING_FOR_DETERMINANTS);
        assertThat(recovery.determinantsReceived(0, List.of(), accepted::incrementAndGet))
                .as("a second answer of the same consumer")
                .isFalse();
        assertThat(recovery.determinantsReceived(1, List.of(), accepted::incrementAndGet)).isTrue();
        assertThat(accepted).hasValue(2);
        assertThat(recovery.state()).isEqualTo(RecoveryState.REPLAYING);

        assertThat(recovery.next(Determinant.Timestamp.class))
                .isEqualTo(new Determinant.Timestamp(42));
        assertThat(recovery.state()).isEqualTo(RecoveryState.RUNNING);
        assertThat(recovery.determinantsReceived(1, List.of(), () -> {}))
                .as("answers after the recovery")
                .isFalse();
    }

    @Test
    void statesOnlyMoveForwardAndMaySkip() {
        assertThat(
                        RecoveryState.WAITING_FOR_CONNECTIONS.canBecome(
                                RecoveryState.WAITING_FOR_DETERMINANTS))
                .isTrue();
        assertThat(RecoveryState.WAITING_FOR_CONNECTIONS.canBecome(RecoveryState.REPLAYING))
                .as("every answer in before the last connection")
                .isTrue();
        assertThat(RecoveryState.WAITING_FOR_DETERMINANTS.canBecome(RecoveryState.RUNNING))
                .as("nothing to replay")
                .isTrue();
        assertThat(RecoveryState.REPLAYING.canBecome(RecoveryState.RUNNING)).isTrue();
        for (RecoveryState state : RecoveryState.values()) {
            assertThat(state.canBecome(state)).as("%s to itself", state).isFalse();
            assertThat(RecoveryState.RUNNING.canBecome(state)).as("RUNNING to %s", state).isFalse();
        }
        assertThat(RecoveryState.REPLAYING.canBecome(RecoveryState.WAITING_FOR_DETERMINANTS))
                .isFalse();
    }

    @Test
    void allAnswersBeforeTheLastConnectionStartTheReplay() {
        CausalRecovery recovery =
                CausalRecovery.recovering("task", LOG, 5, 2, TIMEOUT, TestDeadlines.INSTANCE);
        recovery.determinantsReceived(0, logged(5, new Determinant.Timestamp(1)), () -> {});
        assertThat(recovery.state()).isEqualTo(RecoveryState.WAITING_FOR_CONNECTIONS);
        recovery.determinantsReceived(1, List.of(), () -> {});
        assertThat(recovery.state()).isEqualTo(RecoveryState.REPLAYING);
        recovery.consumerConnected(0);
        recovery.consumerConnected(1);
        assertThat(recovery.state())
                .as("a late connection changes nothing")
                .isEqualTo(RecoveryState.REPLAYING);
    }

    @Test
    void nothingToReplayMeansRunningRightAway() {
        CausalRecovery recovery =
                CausalRecovery.recovering("task", LOG, 5, 1, TIMEOUT, TestDeadlines.INSTANCE);
        recovery.determinantsReceived(0, List.of(), () -> {});
        assertThat(recovery.state()).isEqualTo(RecoveryState.RUNNING);
    }

    @Test
    void answersMergeAndOnlyTheRestoredEpochOnIsReplayed() {
        CausalRecovery recovery =
                CausalRecovery.recovering("task", LOG, 6, 2, TIMEOUT, TestDeadlines.INSTANCE);
        List<SharedDelta> longer = new ArrayList<>(logged(5, new Determinant.RandomSeed(1)));
        longer.addAll(
                logged(
                        6,
                        new Determinant.Order(0, 10),
                        new Determinant.Order(1, 0),
                        new Determinant.Timestamp(7)));
        List<SharedDelta> shorter = logged(6, new Determinant.Order(0, 10));
        recovery.determinantsReceived(0, shorter, () -> {});
        recovery.determinantsReceived(1, longer, () -> {});

        assertThat(recovery.next(Determinant.Order.class)).isEqualTo(new Determinant.Order(0, 10));
        assertThat(recovery.next(Determinant.Order.class)).isEqualTo(new Determinant.Order(1, 0));
        assertThat(recovery.peek(Determinant.Order.class)).as("the head is a timestamp").isNull();
        assertThat(recovery.next(Determinant.Timestamp.class))
                .isEqualTo(new Determinant.Timestamp(7));
        assertThat(recovery.isRunning()).isTrue();
    }

    @Test
    void theReplayFollowsEpochsAsTheTaskTakesCheckpoints() {
        CausalRecovery recovery =
                CausalRecovery.recovering("task", LOG, 1, 1, TIMEOUT, TestDeadlines.INSTANCE);
        List<SharedDelta> deltas = new ArrayList<>(logged(1, new Determinant.Timestamp(1)));
        deltas.addAll(logged(2, new Determinant.Timestamp(2)));
        recovery.determinantsReceived(0, deltas, () -> {});

        assertThat(recovery.next(Determinant.Timestamp.class).millis()).isEqualTo(1);
        assertThat(recovery.isReplaying()).as("epoch 2 is still to come").isTrue();
        assertThatThrownBy(() -> recovery.next(Determinant.Timestamp.class))
                .as("asking before taking checkpoint 2")
                .isInstanceOf(LocalRecoveryImpossibleException.class);
        recovery.epochStarted(2);
        assertThat(recovery.next(Determinant.Timestamp.class).millis()).isEqualTo(2);
        assertThat(recovery.isRunning()).isTrue();
    }

    @Test
    void aCheckpointWithDeterminantsLeftIsDivergence() {
        CausalRecovery recovery =
                CausalRecovery.recovering("task", LOG, 1, 1, TIMEOUT, TestDeadlines.INSTANCE);
        List<SharedDelta> deltas =
                new ArrayList<>(
                        logged(1, new Determinant.Timestamp(1), new Determinant.Timestamp(2)));
        deltas.addAll(logged(2, new Determinant.Timestamp(3)));
        recovery.determinantsReceived(0, deltas, () -> {});
        recovery.next(Determinant.Timestamp.class);
        assertThatThrownBy(() -> recovery.epochStarted(2))
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("unused");
    }

    @Test
    void askingForAnotherKindIsDivergence() {
        CausalRecovery recovery =
                CausalRecovery.recovering("task", LOG, 1, 1, TIMEOUT, TestDeadlines.INSTANCE);
        recovery.determinantsReceived(0, logged(1, new Determinant.Order(2, 0)), () -> {});
        assertThatThrownBy(() -> recovery.next(Determinant.Timestamp.class))
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("Order");
    }

    @Test
    void contradictingAnswersFallBack() {
        CausalRecovery recovery =
                CausalRecovery.recovering("task", LOG, 1, 2, TIMEOUT, TestDeadlines.INSTANCE);
        recovery.determinantsReceived(0, logged(1, new Determinant.Timestamp(1)), () -> {});
        recovery.determinantsReceived(1, logged(1, new Determinant.Timestamp(2)), () -> {});
        assertThat(recovery.state()).isEqualTo(RecoveryState.REPLAYING);
        assertThatThrownBy(() -> recovery.next(Determinant.Timestamp.class))
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("do not agree");
    }

    @Test
    void consumersThatDoNotAnswerInTimeFallBack() {
        CausalRecovery recovery =
                CausalRecovery.recovering("task", LOG, 1, 2, Duration.ZERO, TestDeadlines.INSTANCE);
        recovery.determinantsReceived(0, List.of(), () -> {});
        assertThatThrownBy(recovery::checkDeadline)
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("1 answered");
    }

    @Test
    void aReplayThatMakesNoProgressFallsBackInsteadOfHanging() throws Exception {
        CausalRecovery recovery =
                CausalRecovery.recovering(
                        "task", LOG, 1, 1, Duration.ofMillis(20), TestDeadlines.INSTANCE);
        recovery.determinantsReceived(
                0, logged(1, new Determinant.Order(2, 10), new Determinant.Timestamp(5)), () -> {});
        assertThat(recovery.state()).isEqualTo(RecoveryState.REPLAYING);
        // a task waiting for input is woken at the deadline, so that it notices it
        recovery.changed().get(10, java.util.concurrent.TimeUnit.SECONDS);
        recovery.changed().get(10, java.util.concurrent.TimeUnit.SECONDS);
        assertThatThrownBy(recovery::checkDeadline)
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("no progress")
                .hasMessageContaining("Order");
    }

    /**
     * Consumers that hold none of the task's epochs (a source between two of its checkpoint
     * triggers logs nothing): nothing that survived depends on a choice of it, so it runs at once.
     */
    @Test
    void aTaskWhoseConsumersHoldNothingOfItRunsAtOnce() {
        CausalRecovery recovery =
                CausalRecovery.recovering("task", LOG, 1, 2, TIMEOUT, TestDeadlines.INSTANCE);
        recovery.determinantsReceived(0, List.of(), () -> {});
        assertThat(recovery.isWaiting()).as("one consumer has not answered yet").isTrue();
        recovery.determinantsReceived(1, List.of(), () -> {});
        assertThat(recovery.state()).isEqualTo(RecoveryState.RUNNING);
        assertThat(recovery.replaysDeterminants()).isFalse();
        assertThat(recovery.peek(Determinant.Order.class)).isNull();
    }

    @Test
    void actionsWaitingForTheEndOfTheRecoveryRunOnce() {
        CausalRecovery recovery =
                CausalRecovery.recovering("task", LOG, 1, 1, TIMEOUT, TestDeadlines.INSTANCE);
        AtomicInteger ran = new AtomicInteger();
        recovery.whenRunning(ran::incrementAndGet);
        assertThat(ran).hasValue(0);
        recovery.determinantsReceived(0, logged(1, new Determinant.RandomSeed(9)), () -> {});
        assertThat(ran).hasValue(0);
        recovery.next(Determinant.RandomSeed.class);
        assertThat(ran).hasValue(1);
        recovery.whenRunning(ran::incrementAndGet);
        assertThat(ran).hasValue(2);
    }
}
