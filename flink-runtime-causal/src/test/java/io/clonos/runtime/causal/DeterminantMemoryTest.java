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

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Causal logs stay within clonos.determinant.memory; what does not fit rolls back globally. */
class DeterminantMemoryTest {

    private static final CausalLogId LOG = CausalLogId.main("vertex", 0);
    private static final CausalLogId UPSTREAM = CausalLogId.main("upstream", 0);

    private static List<Determinant> determinants(TaskCausalLog log, long epoch) throws Exception {
        List<Determinant> all = new ArrayList<>();
        for (CausalLogDelta delta : log.deltasSince(new TaskCausalLog.Position())) {
            if (delta.epoch() == epoch) {
                all.addAll(DeterminantEncoding.decode(delta.bytes()));
            }
        }
        return all;
    }

    @Test
    void aFullLogEndsItsEpochWithAnOverflowAndFreesItsMemoryAtTheCheckpoint() throws Exception {
        DeterminantMemory memory = new DeterminantMemory(100);
        TaskCausalLog log = new TaskCausalLog(LOG, 1, memory);
        for (int i = 0; i < 200; i++) {
            log.append(new Determinant.RandomSeed(i));
        }
        assertThat(memory.usedBytes()).isLessThanOrEqualTo(101);
        List<Determinant> epoch1 = determinants(log, 1);
        assertThat(epoch1.get(epoch1.size() - 1)).isInstanceOf(Determinant.Overflow.class);
        assertThat(epoch1).filteredOn(d -> d instanceof Determinant.Overflow).hasSize(1);

        log.startEpoch(2);
        log.truncateBefore(2);
        assertThat(memory.usedBytes()).isZero();
        log.append(new Determinant.RandomSeed(7));
        assertThat(determinants(log, 2)).containsExactly(new Determinant.RandomSeed(7));
    }

    @Test
    void heldLogsThatDoNotFitEndInAnOverflowMarker() throws Exception {
        DeterminantMemory memory = new DeterminantMemory(40);
        TaskCausalLog upstream = new TaskCausalLog(UPSTREAM, 1);
        HeldCausalLogs held = new HeldCausalLogs(memory);
        TaskCausalLog.Position position = new TaskCausalLog.Position();
        for (int i = 0; i < 30; i++) {
            upstream.append(new Determinant.Order(i % 3, 100 + i));
            for (CausalLogDelta delta : upstream.deltasSince(position)) {
                held.merge(new SharedDelta(delta, 1));
            }
        }
        assertThat(memory.usedBytes()).isLessThanOrEqualTo(41);
        List<Determinant> copy = new ArrayList<>();
        for (SharedDelta shared : held.all(UPSTREAM)) {
            copy.addAll(DeterminantEncoding.decode(shared.delta().bytes()));
        }
        assertThat(copy.get(copy.size() - 1)).isInstanceOf(Determinant.Overflow.class);
        assertThat(copy.subList(0, copy.size() - 1))
                .isEqualTo(determinants(upstream, 1).subList(0, copy.size() - 1));

        held.truncateBefore(2);
        assertThat(memory.usedBytes()).isZero();
    }

    @Test
    void aTaskWhoseLogOverflowedIsNotRecoveredByDeterminants() {
        TaskCausalLog predecessor = new TaskCausalLog(LOG, 5, new DeterminantMemory(3));
        predecessor.append(new Determinant.RandomSeed(1));
        predecessor.append(new Determinant.RandomSeed(2));
        CausalRecovery recovery = ReplayFixtures.replaying(predecessor);

        assertThatThrownBy(() -> recovery.next(Determinant.RandomSeed.class))
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("clonos.determinant.memory");
    }

    @Test
    void aFullMemoryMakesTheTaskWaitForTheCheckpointItTookThenGoOn() throws Exception {
        DeterminantMemory memory = new DeterminantMemory(30);
        TaskCausalLog log = new TaskCausalLog(LOG, 1, memory);
        CausalTask task = runningTask(log, new HeldCausalLogs(memory));
        Thread taskThread =
                waitingInEpoch2(
                        task,
                        () -> {
                            for (int i = 0; i < 8; i++) {
                                task.logged(new Determinant.RandomSeed(100 + i));
                            }
                        });
        assertThat(memory.usedBytes())
                .as("the memory is full, nothing overflowed")
                .isLessThanOrEqualTo(30);

        log.truncateBefore(2);
        task.held().truncateBefore(2);
        task.checkpointCompleted(2);
        taskThread.join();

        List<Determinant> expected = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            expected.add(new Determinant.RandomSeed(100 + i));
        }
        assertThat(determinants(log, 2))
                .as("epoch 2 complete, without an overflow marker")
                .isEqualTo(expected);
    }

    @Test
    void heldLogsWaitForMemoryOnTheTaskThreadToo() throws Exception {
        DeterminantMemory memory = new DeterminantMemory(30);
        TaskCausalLog log = new TaskCausalLog(LOG, 1, memory);
        HeldCausalLogs held = new HeldCausalLogs(memory);
        CausalTask task = runningTask(log, held);
        TaskCausalLog upstream = new TaskCausalLog(UPSTREAM, 1);
        TaskCausalLog.Position position = new TaskCausalLog.Position();
        Thread taskThread =
                waitingInEpoch2(
                        task,
                        () -> {
                            upstream.startEpoch(2);
                            try {
                                for (int i = 0; i < 6; i++) {
                                    upstream.append(new Determinant.Order(1, 100 + i));
                                    for (CausalLogDelta delta : upstream.deltasSince(position)) {
                                        held.merge(new SharedDelta(delta, 1));
                                    }
                                }
                            } catch (CorruptCausalLogException e) {
                                throw new IllegalStateException(e);
                            }
                        });

        log.truncateBefore(2);
        held.truncateBefore(2);
        task.checkpointCompleted(2);
        taskThread.join();

        List<Determinant> copy = new ArrayList<>();
        for (SharedDelta shared : held.all(UPSTREAM)) {
            copy.addAll(DeterminantEncoding.decode(shared.delta().bytes()));
        }
        assertThat(copy).as("the held copy is complete").isEqualTo(determinants(upstream, 2));
    }

    @Test
    void anAbortedCheckpointEndsTheWaitWithAnOverflowMarker() throws Exception {
        DeterminantMemory memory = new DeterminantMemory(30);
        TaskCausalLog log = new TaskCausalLog(LOG, 1, memory);
        CausalTask task = runningTask(log, new HeldCausalLogs(memory));
        Thread taskThread =
                waitingInEpoch2(
                        task,
                        () -> {
                            for (int i = 0; i < 8; i++) {
                                task.logged(new Determinant.RandomSeed(100 + i));
                            }
                        });

        task.checkpointAborted(2);
        taskThread.join();

        List<Determinant> epoch2 = determinants(log, 2);
        assertThat(epoch2.get(epoch2.size() - 1)).isInstanceOf(Determinant.Overflow.class);
    }

    @Test
    void aReplacementWaitsOnlyForCheckpointsThatCountIt() throws Exception {
        DeterminantMemory memory = new DeterminantMemory(30);
        TaskCausalLog log = new TaskCausalLog(LOG, 1, memory);
        CausalTask task = runningTask(log, new HeldCausalLogs(memory));
        task.replacedAFailedAttempt();
        AtomicBoolean waitsInStaleEpoch = new AtomicBoolean(true);
        CountDownLatch nextCheckpoint = new CountDownLatch(1);
        Thread taskThread =
                new Thread(
                        () -> {
                            task.processingStarted();
                            for (int i = 0; i < 8; i++) {
                                task.logged(new Determinant.RandomSeed(i));
                            }
                            // the barrier of a checkpoint triggered before the attempt ran, which
                            // the coordinator aborted at the failover without telling it
                            task.epochStarted(2);
                            waitsInStaleEpoch.set(memory.mayWait());
                            if (!waitsInStaleEpoch.get()) {
                                for (int i = 0; i < 8; i++) {
                                    task.logged(new Determinant.RandomSeed(100 + i));
                                }
                            }
                            try {
                                nextCheckpoint.await();
                            } catch (InterruptedException e) {
                                return;
                            }
                            task.epochStarted(3);
                            for (int i = 0; i < 8; i++) {
                                task.logged(new Determinant.RandomSeed(200 + i));
                            }
                        });
        taskThread.start();
        while (taskThread.getState() != Thread.State.WAITING) {
            Thread.sleep(1);
        }
        assertThat(waitsInStaleEpoch).as("waits for a checkpoint that does not count it").isFalse();
        List<Determinant> epoch2 = determinants(log, 2);
        assertThat(epoch2.get(epoch2.size() - 1)).isInstanceOf(Determinant.Overflow.class);

        task.checkpointAborted(2);
        nextCheckpoint.countDown();
        awaitWaiting(taskThread);

        log.truncateBefore(3);
        task.checkpointCompleted(3);
        taskThread.join();
        assertThat(determinants(log, 3))
                .as("checkpoint 3 counts an attempt that heard how checkpoint 2 ended: it waited")
                .doesNotHaveAnyElementsOfTypes(Determinant.Overflow.class)
                .hasSize(8);
    }

    @Test
    void withoutAPendingCheckpointAFullMemoryOverflowsAtOnce() throws Exception {
        DeterminantMemory memory = new DeterminantMemory(30);
        TaskCausalLog log = new TaskCausalLog(LOG, 1, memory);
        CausalTask task = runningTask(log, new HeldCausalLogs(memory));
        task.processingStarted();
        for (int i = 0; i < 30; i++) {
            task.logged(new Determinant.RandomSeed(i));
        }

        List<Determinant> epoch1 = determinants(log, 1);
        assertThat(epoch1.get(epoch1.size() - 1))
                .as("the first epoch has no checkpoint to wait for")
                .isInstanceOf(Determinant.Overflow.class);
    }

    /**
     * Starts a task thread that logs 16 bytes in epoch 1, takes checkpoint 2 and then does {@code
     * inEpoch2}, which outgrows the memory; returns once it waits for memory.
     */
    /** A task of one input channel that does not recover, its logs sharing one memory. */
    private static CausalTask runningTask(TaskCausalLog log, HeldCausalLogs held) {
        return new CausalTask(log, held, CausalRecovery.notRecovering("task", LOG), 1, 1, -1);
    }

    private static Thread waitingInEpoch2(CausalTask task, Runnable inEpoch2)
            throws InterruptedException {
        Thread taskThread =
                new Thread(
                        () -> {
                            task.processingStarted();
                            for (int i = 0; i < 8; i++) {
                                task.logged(new Determinant.RandomSeed(i));
                            }
                            task.epochStarted(2);
                            inEpoch2.run();
                        });
        taskThread.start();
        awaitWaiting(taskThread);
        return taskThread;
    }

    /** Waits until the thread waits (for memory), or ends. */
    private static void awaitWaiting(Thread thread) throws InterruptedException {
        while (thread.isAlive() && thread.getState() != Thread.State.TIMED_WAITING) {
            Thread.sleep(1);
        }
        assertThat(thread.isAlive()).as("the task waits for memory").isTrue();
    }

    @Test
    void aBadLimitIsRejected() {
        assertThatThrownBy(() -> new DeterminantMemory(0))
                .hasMessageContaining("clonos.determinant.memory");
    }
}
