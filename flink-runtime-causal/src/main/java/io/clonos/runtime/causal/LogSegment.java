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

import org.apache.flink.annotation.Internal;

import java.util.Arrays;

/**
 * The bytes of one epoch of one causal log. A growable array rather than a stream, because
 * piggybacking reads a small tail of it for every buffer sent and merging compares only the
 * overlap: neither may copy the whole epoch. Not thread-safe; its owner synchronizes.
 */
@Internal
final class LogSegment {

    private byte[] bytes = new byte[64];
    private int size;

    int size() {
        return size;
    }

    void append(byte[] source, int offset, int length) {
        if (size + length > bytes.length) {
            bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + length));
        }
        System.arraycopy(source, offset, bytes, size, length);
        size += length;
    }

    byte[] copy(int from) {
        return Arrays.copyOfRange(bytes, from, size);
    }

    /**
     * Whether {@code length} bytes at {@code offset} equal {@code other} from {@code otherOffset}.
     */
    boolean regionEquals(int offset, byte[] other, int otherOffset, int length) {
        return Arrays.equals(
                bytes, offset, offset + length, other, otherOffset, otherOffset + length);
    }
}
