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

package io.clonos.runtime.inflightlog;

import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.buffer.FreeingBufferRecycler;
import org.apache.flink.runtime.io.network.buffer.NetworkBuffer;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class InMemoryInFlightLogTest {

    private static Buffer buffer(int value, int size) {
        byte[] bytes = new byte[size];
        ByteBuffer.wrap(bytes).putInt(value);
        return new NetworkBuffer(
                MemorySegmentFactory.wrap(bytes),
                FreeingBufferRecycler.INSTANCE,
                Buffer.DataType.DATA_BUFFER,
                size);
    }

    private static int valueOf(Buffer buffer) {
        int value = buffer.getNioBufferReadable().getInt();
        buffer.recycleBuffer();
        return value;
    }

    private static List<Integer> drain(InFlightLog.Cursor cursor) throws Exception {
        List<Integer> values = new ArrayList<>();
        for (Buffer next = cursor.next(); next != null; next = cursor.next()) {
            values.add(valueOf(next));
        }
        return values;
    }

    @Test
    void replaysEveryEpochInTheOrderSent() throws Exception {
        InMemoryInFlightLog log = new InMemoryInFlightLog(0, 1 << 20);
        log.append(buffer(1, 64));
        log.append(buffer(2, 64));
        log.startEpoch(1);
        log.append(buffer(3, 64));
        log.startEpoch(2);
        log.append(buffer(4, 64));

        assertThat(drain(log.replay())).containsExactly(1, 2, 3, 4);
        assertThat(log.numberOfBuffers()).isEqualTo(4);
        assertThat(log.sizeInBytes()).isEqualTo(4 * 64);
    }

    @Test
    void truncationDropsEpochsBeforeTheCompletedCheckpoint() throws Exception {
        InMemoryInFlightLog log = new InMemoryInFlightLog(0, 1 << 20);
        log.append(buffer(1, 10));
        log.startEpoch(5);
        log.append(buffer(2, 20));
        log.startEpoch(6);
        log.append(buffer(3, 30));

        log.truncateBefore(6);

        assertThat(log.oldestEpoch()).isEqualTo(6);
        assertThat(log.sizeInBytes()).isEqualTo(30);
        assertThat(drain(log.replay())).containsExactly(3);
    }

    @Test
    void truncationNeverDropsTheCurrentEpoch() throws Exception {
        InMemoryInFlightLog log = new InMemoryInFlightLog(3, 1 << 20);
        log.append(buffer(1, 10));

        log.truncateBefore(9);

        assertThat(log.oldestEpoch()).isEqualTo(3);
        assertThat(drain(log.replay())).containsExactly(1);
    }

    @Test
    void replayedBuffersAreCopiesTheCallerOwns() throws Exception {
        InMemoryInFlightLog log = new InMemoryInFlightLog(0, 1 << 20);
        Buffer original = buffer(42, 16);
        log.append(original);
        original.recycleBuffer();

        Buffer first = log.replay().next();
        Buffer second = log.replay().next();

        assertThat(valueOf(first)).isEqualTo(42);
        assertThat(valueOf(second)).isEqualTo(42);
    }

    @Test
    void aLogIsFullOnceItsBudgetIsUsedAndHasRoomAgainAfterTruncation() {
        InMemoryInFlightLog log = new InMemoryInFlightLog(0, 100);
        log.append(buffer(1, 60));
        assertThat(log.isFull()).isFalse();
        log.append(buffer(2, 60));
        assertThat(log.isFull()).as("past its budget, within its overdraft").isTrue();

        log.startEpoch(1);
        log.truncateBefore(1);
        assertThat(log.isFull()).isFalse();
    }

    @Test
    void aLogPastItsOverdraftOverflowsAndRefusesToReplayTheLostEpochs() throws Exception {
        InMemoryInFlightLog log = new InMemoryInFlightLog(0, 100);
        log.append(buffer(1, 60));
        log.append(buffer(2, 60));
        log.append(buffer(3, 60));
        assertThat(drain(log.replay())).as("within the overdraft").containsExactly(1, 2, 3);
        log.append(buffer(4, 60));

        assertThat(log.sizeInBytes()).isLessThanOrEqualTo(200);
        assertThatThrownBy(log::replay)
                .isInstanceOf(InFlightLogUnavailableException.class)
                .hasMessageContaining("overflowed");

        log.startEpoch(1);
        log.append(buffer(5, 60));
        assertThatThrownBy(log::replay)
                .as("epoch 0 is still the oldest")
                .isInstanceOf(InFlightLogUnavailableException.class);

        log.truncateBefore(1);
        assertThat(drain(log.replay())).containsExactly(5);
    }

    @Test
    void memoryNeverExceedsTheBudgetAndItsOverdraft() {
        InMemoryInFlightLog log = new InMemoryInFlightLog(0, 1000);
        for (int i = 0; i < 1000; i++) {
            if (i % 7 == 0) {
                log.startEpoch(log.currentEpoch() + 1);
            }
            log.append(buffer(i, 33));
            assertThat(log.sizeInBytes())
                    .as("the budget and as much of overdraft")
                    .isLessThanOrEqualTo(2000);
        }
    }

    @Test
    void aCursorOverTakenByTruncationFailsInsteadOfSkipping() throws Exception {
        InMemoryInFlightLog log = new InMemoryInFlightLog(0, 1 << 20);
        log.append(buffer(1, 8));
        log.startEpoch(1);
        log.append(buffer(2, 8));
        InFlightLog.Cursor cursor = log.replay();

        log.truncateBefore(1);

        assertThatThrownBy(cursor::next).isInstanceOf(InFlightLogUnavailableException.class);
    }

    @Test
    void replayWhileProducingSeesEveryBufferOnceInOrder() throws Exception {
        InMemoryInFlightLog log = new InMemoryInFlightLog(0, 64L << 20);
        int total = 20_000;
        for (int i = 0; i < total / 2; i++) {
            log.append(buffer(i, 32));
        }
        InFlightLog.Cursor cursor = log.replay();
        CountDownLatch replayStarted = new CountDownLatch(1);
        ExecutorService producer = Executors.newSingleThreadExecutor();
        try {
            Future<?> producing =
                    producer.submit(
                            () -> {
                                awaitQuietly(replayStarted);
                                for (int i = total / 2; i < total; i++) {
                                    if (i % 1000 == 0) {
                                        log.startEpoch(i);
                                    }
                                    log.append(buffer(i, 32));
                                }
                            });
            List<Integer> replayed = new ArrayList<>();
            replayStarted.countDown();
            while (replayed.size() < total) {
                Buffer next = cursor.next();
                if (next != null) {
                    replayed.add(valueOf(next));
                } else {
                    assertThat(
                                    producing.isDone()
                                            && cursor.remaining() == 0
                                            && replayed.size() < total)
                            .as("caught up with a finished producer early")
                            .isFalse();
                    Thread.onSpinWait();
                }
            }
            producing.get(1, TimeUnit.MINUTES);
            assertThat(replayed).hasSize(total);
            for (int i = 0; i < total; i++) {
                assertThat(replayed.get(i)).isEqualTo(i);
            }
            assertThat(cursor.next()).isNull();
        } finally {
            producer.shutdownNow();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
