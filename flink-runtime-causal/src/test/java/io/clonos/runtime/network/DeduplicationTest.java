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

import io.clonos.runtime.causal.LocalRecoveryImpossibleException;

import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.buffer.FreeingBufferRecycler;
import org.apache.flink.runtime.io.network.buffer.NetworkBuffer;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Deduplication at the sender: exactly the received bytes are skipped, and checked. */
class DeduplicationTest {

    private static Buffer data(byte... bytes) {
        NetworkBuffer buffer =
                new NetworkBuffer(
                        MemorySegmentFactory.allocateUnpooledSegment(Math.max(1, bytes.length)),
                        FreeingBufferRecycler.INSTANCE);
        buffer.writeBytes(bytes);
        return buffer;
    }

    /** What a consumer that received these epochs' bytes reports. */
    private static TreeMap<Long, long[]> received(Map<Long, byte[]> epochs) {
        TreeMap<Long, long[]> received = new TreeMap<>();
        epochs.forEach(
                (epoch, bytes) -> {
                    EpochBytes count = new EpochBytes();
                    count.add(data(bytes));
                    received.put(epoch, new long[] {count.bytes(), count.checksum()});
                });
        return received;
    }

    private static byte[] bytesOf(Buffer buffer) {
        byte[] bytes = new byte[buffer.readableBytes()];
        buffer.getNioBufferReadable().get(bytes);
        return bytes;
    }

    @Test
    void skipsWhatTheConsumerHasAcrossBuffersAndEpochsAndSendsTheRest() {
        Deduplication dedup =
                new Deduplication(
                        "test", received(Map.of(3L, new byte[] {1, 2, 3}, 4L, new byte[] {4, 5})));
        assertThat(dedup.total()).isEqualTo(5);
        assertThat(dedup.data(data((byte) 1, (byte) 2))).isNull();
        assertThat(dedup.data(data((byte) 3, (byte) 4))).isNull();
        assertThat(dedup.isDone()).isFalse();
        Buffer rest = dedup.data(data((byte) 5, (byte) 6, (byte) 7));
        assertThat(bytesOf(rest)).containsExactly(6, 7);
        assertThat(dedup.isDone()).isTrue();
        Buffer later = data((byte) 8);
        assertThat(dedup.data(later)).isSameAs(later);
    }

    @Test
    void aConsumerWithNothingNeedsNoSkipping() {
        assertThat(new Deduplication("test", new TreeMap<>()).isDone()).isTrue();
        assertThat(new Deduplication("test", received(Map.of(3L, new byte[0]))).isDone()).isTrue();
    }

    @Test
    void differentBytesAreDivergence() {
        Deduplication dedup = new Deduplication("test", received(Map.of(3L, new byte[] {1, 2, 3})));
        assertThatThrownBy(() -> dedup.data(data((byte) 1, (byte) 9, (byte) 3, (byte) 4)))
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("differ");
    }

    @Test
    void theSameBytesInAnotherEpochSplitAreDivergence() {
        // the consumer saw {1} then {2}; a replay that regenerates {2} before {1} has the same
        // total but not the same segments
        Deduplication dedup =
                new Deduplication("test", received(Map.of(3L, new byte[] {1}, 4L, new byte[] {2})));
        assertThatThrownBy(() -> dedup.data(data((byte) 2, (byte) 1)))
                .isInstanceOf(LocalRecoveryImpossibleException.class);
    }
}
