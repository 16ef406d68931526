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

import io.clonos.runtime.configuration.ClonosOptions.SpillPolicy;

import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.buffer.FreeingBufferRecycler;
import org.apache.flink.runtime.io.network.buffer.NetworkBuffer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SpillingInFlightLogTest {

    @TempDir Path tmp;

    private SpillingInFlightLog log(SpillPolicy policy, InFlightLogMemory memory, int prefetch) {
        return new SpillingInFlightLog(
                "test", 0, memory, policy, 0.5, prefetch, tmp.resolve("log"));
    }

    /** A buffer of {@code size} bytes that starts with {@code value}, the rest random. */
    private static Buffer buffer(int value, int size, Buffer.DataType type) {
        byte[] bytes = new byte[size];
        new Random(value).nextBytes(bytes);
        ByteBuffer.wrap(bytes).putInt(value);
        return new NetworkBuffer(
                MemorySegmentFactory.wrap(bytes), FreeingBufferRecycler.INSTANCE, type, size);
    }

    private static Buffer buffer(int value, int size) {
        return buffer(value, size, Buffer.DataType.DATA_BUFFER);
    }

    /** Each replayed buffer's value, checking its bytes are those that were logged. */
    private static List<Integer> drain(InFlightLog.Cursor cursor) throws Exception {
        List<Integer> values = new ArrayList<>();
        for (Buffer next = cursor.next(); next != null; next = cursor.next()) {
            values.add(valueOf(next));
        }
        return values;
    }

    private static int valueOf(Buffer replayed) {
        ByteBuffer bytes = replayed.getNioBufferReadable();
        int value = bytes.getInt(0);
        Buffer expected = buffer(value, replayed.readableBytes(), replayed.getDataType());
        assertThat(bytes)
                .as("the bytes of buffer %s", value)
                .isEqualTo(expected.getNioBufferReadable());
        replayed.recycleBuffer();
        return value;
    }

    private static List<Integer> range(int from, int to) {
        List<Integer> values = new ArrayList<>();
        for (int i = from; i < to; i++) {
            values.add(i);
        }
        return values;
    }

    @ParameterizedTest
    @EnumSource(SpillPolicy.class)
    void aLogThatOutgrowsItsMemoryNeitherOverflowsNorExceedsIt(SpillPolicy policy)
            throws Exception {
        InFlightLogMemory memory = new InFlightLogMemory(1_000);
        SpillingInFlightLog log = log(policy, memory, 4);
        for (int i = 0; i < 200; i++) {
            if (i % 30 == 29) {
                log.startEpoch(log.currentEpoch() + 1);
            }
            log.append(buffer(i, 97));
            assertThat(memory.used()).isLessThanOrEqualTo(1_000);
        }

        assertThat(log.sizeInBytes()).isEqualTo(200 * 97);
        assertThat(log.bytesOnDisk()).isGreaterThanOrEqualTo(200 * 97 - 1_000);
        assertThat(drain(log.replay())).isEqualTo(range(0, 200));
        assertThat(log.readBytes()).isEqualTo(log.bytesOnDisk());
    }

    /**
     * Logs of one TaskManager share their memory, and the arrays of the buffers one log spilled or
     * dropped hold the next buffers of any log: every log still replays its own bytes.
     */
    @ParameterizedTest
    @EnumSource(SpillPolicy.class)
    void logsThatShareTheirMemoryReplayTheirOwnBytesWhileArraysAreReused(SpillPolicy policy)
            throws Exception {
        InFlightLogMemory memory = new InFlightLogMemory(8 * 4096);
        SpillingInFlightLog first =
                new SpillingInFlightLog("first", 0, memory, policy, 0.5, 2, tmp.resolve("first"));
        SpillingInFlightLog second =
                new SpillingInFlightLog("second", 0, memory, policy, 0.5, 2, tmp.resolve("second"));
        long reused = 0;
        for (int i = 0; i < 120; i++) {
            if (i % 20 == 19) {
                first.startEpoch(first.currentEpoch() + 1);
                second.startEpoch(second.currentEpoch() + 1);
                first.truncateBefore(first.currentEpoch() - 1);
                second.truncateBefore(second.currentEpoch() - 1);
            }
            reused = Math.max(reused, memory.keptBytes());
            first.append(buffer(i, 4096));
            second.append(buffer(1_000 + i, 4096));
        }

        assertThat(drain(first.replay())).isEqualTo(range(99, 120));
        assertThat(drain(second.replay())).isEqualTo(range(1_099, 1_120));
        if (policy != SpillPolicy.EAGER) {
            assertThat(reused).as("arrays kept for reuse on the way").isPositive();
        }
        first.close();
        second.close();
        assertThat(memory.used()).isZero();
    }

    @Test
    void eagerWritesEveryBufferAsItIsLoggedAndKeepsNoneInMemory() throws Exception {
        InFlightLogMemory memory = new InFlightLogMemory(1 << 20);
        SpillingInFlightLog log = log(SpillPolicy.EAGER, memory, 3);
        for (int i = 0; i < 10; i++) {
            log.append(buffer(i, 64));
        }

        assertThat(memory.used()).isZero();
        assertThat(log.bytesOnDisk()).isEqualTo(640);
        assertThat(log.spilledBytes()).isEqualTo(640);
        assertThat(drain(log.replay())).isEqualTo(range(0, 10));
    }

    @Test
    void epochWritesAnEpochOnceTheNextStartsAndKeepsTheCurrentInMemory() throws Exception {
        InFlightLogMemory memory = new InFlightLogMemory(1 << 20);
        SpillingInFlightLog log = log(SpillPolicy.EPOCH, memory, 8);
        for (int i = 0; i < 5; i++) {
            log.append(buffer(i, 100));
        }
        assertThat(log.bytesOnDisk()).isZero();
        assertThat(memory.used()).isEqualTo(500);

        log.startEpoch(1);
        log.append(buffer(5, 100));

        assertThat(log.bytesOnDisk()).isEqualTo(500);
        assertThat(memory.used()).isEqualTo(100);
        assertThat(drain(log.replay())).isEqualTo(range(0, 6));
    }

    @Test
    void availabilitySpillsEverythingWhenTheFreeFractionDropsBelowTheTrigger() throws Exception {
        InFlightLogMemory memory = new InFlightLogMemory(1_000);
        SpillingInFlightLog log = log(SpillPolicy.AVAILABILITY, memory, 8);
        for (int i = 0; i < 5; i++) {
            log.append(buffer(i, 100));
        }
        assertThat(log.bytesOnDisk()).as("half the memory is free").isZero();

        log.append(buffer(5, 100));

        assertThat(memory.used()).as("below the trigger of 0.5 free").isZero();
        assertThat(log.bytesOnDisk()).isEqualTo(600);
        log.append(buffer(6, 100));
        assertThat(drain(log.replay())).isEqualTo(range(0, 7));
    }

    @Test
    void logsShareTheTaskManagersMemory() throws Exception {
        InFlightLogMemory memory = new InFlightLogMemory(1_000);
        SpillingInFlightLog first = log(SpillPolicy.EPOCH, memory, 8);
        SpillingInFlightLog second =
                new SpillingInFlightLog(
                        "second", 0, memory, SpillPolicy.EPOCH, 0.5, 8, tmp.resolve("second"));
        for (int i = 0; i < 9; i++) {
            first.append(buffer(i, 100));
        }
        for (int i = 0; i < 5; i++) {
            second.append(buffer(100 + i, 100));
        }

        assertThat(memory.used()).isLessThanOrEqualTo(1_000);
        assertThat(second.bytesOnDisk()).as("the first log holds the memory").isPositive();
        assertThat(drain(first.replay())).isEqualTo(range(0, 9));
        assertThat(drain(second.replay())).isEqualTo(range(100, 105));
    }

    @Test
    void eventsKeepTheirTypeThroughTheDisk() throws Exception {
        SpillingInFlightLog log = log(SpillPolicy.EAGER, new InFlightLogMemory(1 << 20), 4);
        log.append(buffer(1, 40));
        log.append(buffer(2, 40, Buffer.DataType.EVENT_BUFFER));
        log.append(buffer(3, 40));

        InFlightLog.Cursor cursor = log.replay();
        List<Buffer.DataType> types = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            assertThat(cursor.peekDataType()).isNotEqualTo(Buffer.DataType.NONE);
            Buffer next = cursor.next();
            types.add(next.getDataType());
            valueOf(next);
        }
        assertThat(types)
                .containsExactly(
                        Buffer.DataType.DATA_BUFFER,
                        Buffer.DataType.EVENT_BUFFER,
                        Buffer.DataType.DATA_BUFFER);
        assertThat(cursor.peekDataType()).isEqualTo(Buffer.DataType.NONE);
    }

    @Test
    void truncationDeletesTheEpochsFilesAndCloseTheDirectory() throws Exception {
        InFlightLogMemory memory = new InFlightLogMemory(1 << 20);
        SpillingInFlightLog log = log(SpillPolicy.EPOCH, memory, 4);
        log.append(buffer(1, 50));
        log.startEpoch(1);
        log.append(buffer(2, 50));
        log.startEpoch(2);
        log.append(buffer(3, 50));
        assertThat(Files.exists(tmp.resolve("log").resolve("epoch-0.log"))).isTrue();

        log.truncateBefore(2);

        assertThat(Files.exists(tmp.resolve("log").resolve("epoch-0.log"))).isFalse();
        assertThat(Files.exists(tmp.resolve("log").resolve("epoch-1.log"))).isFalse();
        assertThat(log.bytesOnDisk()).isZero();
        assertThat(drain(log.replay())).containsExactly(3);

        log.close();
        assertThat(Files.exists(tmp.resolve("log"))).isFalse();
        assertThat(memory.used()).isZero();
    }

    @Test
    void aFailedWriteMakesTheLogRefuseTheLostEpochsNamingTheFailure() throws Exception {
        // the log's directory cannot be created: a file is in its place
        Files.writeString(tmp.resolve("log"), "in the way");
        SpillingInFlightLog log = log(SpillPolicy.EAGER, new InFlightLogMemory(1 << 20), 4);
        log.append(buffer(1, 50));
        log.append(buffer(2, 50));

        assertThatThrownBy(log::replay)
                .isInstanceOf(InFlightLogUnavailableException.class)
                .hasMessageContaining("writing to");

        log.startEpoch(1);
        log.truncateBefore(1);
        Files.delete(tmp.resolve("log"));
        log.append(buffer(3, 50));
        assertThat(drain(log.replay())).as("a later epoch is whole again").containsExactly(3);
    }

    @Test
    void aFailedReadFailsTheReplayAndEveryLaterOne() throws Exception {
        SpillingInFlightLog log = log(SpillPolicy.EAGER, new InFlightLogMemory(1 << 20), 2);
        for (int i = 0; i < 6; i++) {
            log.append(buffer(i, 50));
        }
        InFlightLog.Cursor cursor = log.replay();
        assertThat(valueOf(cursor.next())).isZero();
        assertThat(valueOf(cursor.next())).isOne();
        // the file loses its end (a disk error, a deleted file)
        try (var channel =
                java.nio.channels.FileChannel.open(
                        tmp.resolve("log").resolve("epoch-0.log"),
                        java.nio.file.StandardOpenOption.WRITE)) {
            channel.truncate(120);
        }

        assertThatThrownBy(cursor::next)
                .isInstanceOf(InFlightLogUnavailableException.class)
                .hasMessageContaining("reading epoch 0");
        assertThatThrownBy(log::replay).isInstanceOf(InFlightLogUnavailableException.class);
    }

    @Test
    void aDamagedSpillFileFailsTheReplayInsteadOfFeedingIt() throws Exception {
        SpillingInFlightLog log = log(SpillPolicy.EAGER, new InFlightLogMemory(1 << 20), 4);
        for (int i = 0; i < 4; i++) {
            log.append(buffer(i, 50));
        }
        // one byte of the third buffer flips on disk
        try (var channel =
                java.nio.channels.FileChannel.open(
                        tmp.resolve("log").resolve("epoch-0.log"),
                        java.nio.file.StandardOpenOption.READ,
                        java.nio.file.StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, 110);
            one.put(0, (byte) ~one.get(0)).rewind();
            channel.write(one, 110);
        }

        InFlightLog.Cursor cursor = log.replay();
        assertThatThrownBy(() -> drain(cursor))
                .isInstanceOf(InFlightLogUnavailableException.class)
                .hasMessageContaining("checksum");
    }

    /**
     * Flink cancels a task by interrupting its thread, which closes a file channel in the middle of
     * a write or a read: the log keeps every buffer, and the thread keeps its interrupt.
     */
    @Test
    void anInterruptedSpillOrReplayLosesNothingAndKeepsTheInterrupt() throws Exception {
        SpillingInFlightLog log = log(SpillPolicy.EAGER, new InFlightLogMemory(1 << 20), 1);
        try {
            for (int i = 0; i < 10; i++) {
                Thread.currentThread().interrupt();
                log.append(buffer(i, 100));
                assertThat(Thread.interrupted()).as("the interrupt after write %s", i).isTrue();
            }
            List<Integer> replayed = new ArrayList<>();
            InFlightLog.Cursor cursor = log.replay();
            for (int i = 0; i < 10; i++) {
                Thread.currentThread().interrupt();
                replayed.add(valueOf(cursor.next()));
                assertThat(Thread.interrupted()).as("the interrupt after read %s", i).isTrue();
            }
            assertThat(cursor.next()).isNull();

            assertThat(replayed).isEqualTo(range(0, 10));
            assertThat(log.bytesOnDisk()).isEqualTo(10 * 100);
            assertThat(drain(log.replay())).isEqualTo(range(0, 10));
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void buffersReadAheadAreNotReplayedAfterTheirTruncation() throws Exception {
        SpillingInFlightLog log = log(SpillPolicy.EAGER, new InFlightLogMemory(1 << 20), 8);
        log.append(buffer(1, 50));
        log.append(buffer(2, 50));
        log.startEpoch(1);
        log.append(buffer(3, 50));
        InFlightLog.Cursor cursor = log.replay();
        assertThat(valueOf(cursor.next())).isEqualTo(1);

        log.truncateBefore(1);

        assertThatThrownBy(cursor::next).isInstanceOf(InFlightLogUnavailableException.class);
    }

    @ParameterizedTest
    @EnumSource(SpillPolicy.class)
    void replayWhileProducingSeesEveryBufferOnceInOrder(SpillPolicy policy) throws Exception {
        SpillingInFlightLog log = log(policy, new InFlightLogMemory(4_000), 5);
        int total = 3_000;
        for (int i = 0; i < total / 2; i++) {
            log.append(buffer(i, 40));
        }
        InFlightLog.Cursor cursor = log.replay();
        ExecutorService producer = Executors.newSingleThreadExecutor();
        try {
            Future<?> producing =
                    producer.submit(
                            () -> {
                                for (int i = total / 2; i < total; i++) {
                                    if (i % 200 == 0) {
                                        log.startEpoch(i);
                                    }
                                    log.append(buffer(i, 40));
                                }
                            });
            List<Integer> replayed = new ArrayList<>();
            while (replayed.size() < total) {
                Buffer next = cursor.next();
                if (next != null) {
                    replayed.add(valueOf(next));
                } else {
                    assertThat(producing.isDone() && cursor.remaining() == 0)
                            .as("caught up with a finished producer early")
                            .isFalse();
                    Thread.onSpinWait();
                }
            }
            producing.get(1, TimeUnit.MINUTES);
            assertThat(replayed).isEqualTo(range(0, total));
        } finally {
            producer.shutdownNow();
        }
    }

    @Test
    void leftBehindDirectoriesAreDeletedAndLiveOnesKept() throws Exception {
        Path dead = Files.createDirectories(tmp.resolve(InFlightLogFiles.PREFIX + "dead"));
        Files.createFile(dead.resolve(InFlightLogFiles.LOCK_FILE));
        Files.writeString(dead.resolve("epoch-3.log"), "stale");
        Path young = Files.createDirectories(tmp.resolve(InFlightLogFiles.PREFIX + "young"));

        try (InFlightLogFiles live = InFlightLogFiles.create(new String[] {tmp.toString()})) {
            assertThat(dead).doesNotExist();
            assertThat(young).as("too young to have its lock yet").exists();
            try (InFlightLogFiles other = InFlightLogFiles.create(new String[] {tmp.toString()})) {
                assertThat(live.directory()).as("held by a live TaskManager").exists();
                assertThat(other.directory()).isNotEqualTo(live.directory());
            }
            try (Stream<Path> left = Files.list(tmp)) {
                assertThat(left).contains(live.directory()).hasSize(2);
            }
        }
        try (Stream<Path> left = Files.list(tmp)) {
            assertThat(left).containsExactly(young);
        }
    }
}
