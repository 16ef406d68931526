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
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** A task's own causal log as its consumer connections read it. */
class TaskCausalLogTest {

    private static final CausalLogId ID = CausalLogId.main("v", 1);

    @Test
    void eachReaderGetsEveryByteOnceAcrossEpochs() throws Exception {
        Random random = new Random(3);
        TaskCausalLog log = new TaskCausalLog(ID, 4);
        TaskCausalLog.Position reader = new TaskCausalLog.Position();
        CausalLog received = new CausalLog();
        List<Determinant> written = new ArrayList<>();
        java.util.Map<Long, List<Determinant>> perEpoch = new java.util.TreeMap<>();
        long epoch = 4;
        for (int i = 0; i < 2_000; i++) {
            int action = random.nextInt(10);
            if (action == 0) {
                log.startEpoch(++epoch);
            } else if (action < 3) {
                for (CausalLogDelta delta : log.deltasSince(reader)) {
                    assertThat(received.merge(delta))
                            .as("a delta carries only new bytes")
                            .isEqualTo(delta.bytes().length);
                }
                assertThat(log.hasNewSince(reader)).isFalse();
            } else {
                // wall-clock readings are encoded as differences within an epoch
                Determinant d =
                        action < 6
                                ? new Determinant.Timestamp(
                                        1_795_000_000_000L + i + random.nextInt(3))
                                : new Determinant.Order(
                                        random.nextInt(8),
                                        random.nextInt(3) * random.nextInt(40_000));
                log.append(d);
                written.add(d);
                perEpoch.computeIfAbsent(epoch, e -> new ArrayList<>()).add(d);
            }
        }
        log.deltasSince(reader)
                .forEach(
                        delta -> {
                            try {
                                received.merge(delta);
                            } catch (CorruptCausalLogException e) {
                                throw new AssertionError(e);
                            }
                        });
        List<Determinant> read = new ArrayList<>();
        for (long e = 4; e <= epoch; e++) {
            read.addAll(received.determinants(ID, e));
        }
        assertThat(read).isEqualTo(written);
        assertThat(log.totalBytes())
                .isEqualTo(
                        perEpoch.values().stream()
                                .mapToLong(d -> DeterminantEncoding.encode(d).length)
                                .sum());
    }

    @Test
    void aReaderBehindTheTruncationStartsAtTheOldestEpochKept() {
        TaskCausalLog log = new TaskCausalLog(ID, 1);
        log.append(new Determinant.Timestamp(1));
        TaskCausalLog.Position reader = new TaskCausalLog.Position();
        log.startEpoch(2);
        log.append(new Determinant.Timestamp(2));
        log.startEpoch(3);
        log.append(new Determinant.Timestamp(3));
        log.truncateBefore(3);

        List<CausalLogDelta> deltas = log.deltasSince(reader);
        assertThat(deltas).extracting(CausalLogDelta::epoch).containsExactly(3L);
        assertThat(deltas.get(0).offset()).isZero();
    }

    /**
     * The task thread ticks and takes records of splits while a consumer connection reads: every
     * tick and record reaches the reader exactly once, in order, whether a read ends a run or
     * another determinant does; and read every 1,000 determinants, a run costs a few bytes instead
     * of one per tick or record.
     */
    @Test
    void ticksReadWhileTheTaskTicksArriveOnceAndInOrder() throws Exception {
        TaskCausalLog log = new TaskCausalLog(ID, 1);
        List<Determinant> written = new ArrayList<>();
        Random random = new Random(11);
        for (long element = 1; element <= 200_000; element++) {
            if (random.nextInt(5_000) == 0) {
                Determinant order = new Determinant.Order(random.nextInt(4), 1 + random.nextInt(9));
                written.add(order);
            }
            if ((element / 5_000) % 2 == 0) {
                // the millisecond changes every 500 elements
                written.add(new Determinant.Timestamp(element, 1_795_000_000_000L + element / 500));
            } else {
                // records of three splits, a stretch of each in turn
                written.add(new Determinant.SourceSplit("split-" + (element / 1_000) % 3));
            }
        }
        TaskCausalLog.Position reader = new TaskCausalLog.Position();
        CausalLog received = new CausalLog();
        java.util.concurrent.atomic.AtomicBoolean done =
                new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicReference<Throwable> failed =
                new java.util.concurrent.atomic.AtomicReference<>();
        Thread network =
                new Thread(
                        () -> {
                            try {
                                while (!done.get()) {
                                    for (CausalLogDelta delta : log.deltasSince(reader)) {
                                        received.merge(delta);
                                    }
                                }
                            } catch (Throwable t) {
                                failed.set(t);
                            }
                        });
        network.start();
        for (Determinant determinant : written) {
            log.appendFresh(determinant);
        }
        done.set(true);
        network.join();
        assertThat(failed.get()).isNull();
        for (CausalLogDelta delta : log.deltasSince(reader)) {
            received.merge(delta);
        }

        List<Determinant> ticks = new ArrayList<>();
        for (Determinant d : received.determinants(ID, 1)) {
            if (d instanceof Determinant.Run run) {
                for (int i = 0; i < run.count(); i++) {
                    ticks.add(run.unit(i));
                }
            } else {
                ticks.add(d);
            }
        }
        assertThat(ticks).isEqualTo(written);

        // how many bytes depends on how often readers cut the runs (this one spins): with a read
        // every 1,000 determinants, a few bytes per run instead of one per tick or record
        TaskCausalLog alone = new TaskCausalLog(ID, 1);
        TaskCausalLog.Position everyThousand = new TaskCausalLog.Position();
        for (int i = 0; i < written.size(); i++) {
            alone.appendFresh(written.get(i));
            if (i % 1_000 == 0) {
                alone.deltasSince(everyThousand);
            }
        }
        assertThat(alone.totalBytes()).isLessThan(written.size() / 20);
    }

    /**
     * An async result is two determinants, where it took effect and what it was: a consumer
     * connection that reads while the task thread logs results never ends its copy between the two
     * (a recovering task would find the point without the result and roll the job back).
     */
    @Test
    void aReaderTakesAnAsyncResultsPointAndValueTogether() throws Exception {
        TaskCausalLog log = new TaskCausalLog(ID, 1);
        byte[] value = new byte[8];
        new Random(5).nextBytes(value);
        Determinant point = new Determinant.AsyncCompletion(7, 0, 3);
        Determinant result = new Determinant.ExternalResult(value);
        TaskCausalLog one = new TaskCausalLog(ID, 1);
        one.append(point, result);
        long pairBytes = one.totalBytes();

        TaskCausalLog.Position reader = new TaskCausalLog.Position();
        java.util.concurrent.atomic.AtomicBoolean done =
                new java.util.concurrent.atomic.AtomicBoolean();
        List<Long> ends = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.CountDownLatch reading = new java.util.concurrent.CountDownLatch(1);
        Thread network =
                new Thread(
                        () -> {
                            reading.countDown();
                            while (!done.get()) {
                                for (CausalLogDelta delta : log.deltasSince(reader)) {
                                    ends.add(delta.end());
                                }
                            }
                        });
        network.start();
        reading.await();
        int pairs = 200_000;
        for (int i = 0; i < pairs; i++) {
            log.append(point, result);
        }
        done.set(true);
        network.join();
        for (CausalLogDelta delta : log.deltasSince(reader)) {
            ends.add(delta.end());
        }

        assertThat(ends).last().isEqualTo(pairs * pairBytes);
        assertThat(ends)
                .as("where reads ended, in bytes: each a whole number of %d-byte pairs", pairBytes)
                .allMatch(end -> end % pairBytes == 0);
    }

    @Test
    void theOpenRunIsNewToAReaderAndEndsWithItsEpoch() throws Exception {
        TaskCausalLog log = new TaskCausalLog(ID, 1);
        TaskCausalLog.Position reader = new TaskCausalLog.Position();
        log.appendFresh(new Determinant.Timestamp(1, 50));
        log.deltasSince(reader);
        for (long element = 2; element <= 4; element++) {
            log.appendFresh(new Determinant.Timestamp(element, 50));
        }
        assertThat(log.hasNewSince(reader)).isTrue();
        log.startEpoch(2);
        log.appendFresh(new Determinant.Timestamp(1, 50));

        CausalLog received = new CausalLog();
        for (CausalLogDelta delta : log.deltasSince(new TaskCausalLog.Position())) {
            received.merge(delta);
        }
        assertThat(received.determinants(ID, 1))
                .containsExactly(
                        new Determinant.Timestamp(1, 50), new Determinant.Timestamp(2, 50, 3));
        assertThat(received.determinants(ID, 2)).containsExactly(new Determinant.Timestamp(1, 50));
    }
}
