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

import java.io.ByteArrayOutputStream;
import java.util.Arrays;

/**
 * The buffer a task's causal log encodes each determinant into before appending it, once per record
 * on the task thread. {@link ByteArrayOutputStream}'s methods take a lock on every byte and {@code
 * toByteArray} copies: neither is needed by one thread that appends the encoded bytes straight from
 * {@link #array}.
 */
@Internal
final class EncodingBuffer extends ByteArrayOutputStream {

    EncodingBuffer() {
        super(32);
    }

    @Override
    public void write(int b) {
        if (count == buf.length) {
            buf = Arrays.copyOf(buf, buf.length * 2);
        }
        buf[count++] = (byte) b;
    }

    @Override
    public void write(byte[] source, int offset, int length) {
        if (count + length > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, count + length));
        }
        System.arraycopy(source, offset, buf, count, length);
        count += length;
    }

    @Override
    public void reset() {
        count = 0;
    }

    @Override
    public int size() {
        return count;
    }

    /** The encoded bytes are {@code array()[0, size())}; valid until the next write. */
    byte[] array() {
        return buf;
    }
}
