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
 * Variable-length integers (LEB128; signed values zig-zag encoded) for the causal log formats, and
 * a reader that rejects truncated, overlong and out-of-range values instead of guessing.
 */
@Internal
final class VarInts {

    private VarInts() {}

    static void writeUnsigned(ByteArrayOutputStream out, long value) {
        if (value < 0) {
            throw new IllegalArgumentException("Negative value " + value);
        }
        writeRaw(out, value);
    }

    static void writeSigned(ByteArrayOutputStream out, long value) {
        writeRaw(out, (value << 1) ^ (value >> 63));
    }

    private static void writeRaw(ByteArrayOutputStream out, long value) {
        while ((value & ~0x7FL) != 0) {
            out.write((int) ((value & 0x7F) | 0x80));
            value >>>= 7;
        }
        out.write((int) value);
    }

    /** Reads bytes {@code [position, end)} of an array. */
    static final class Reader {
        private final byte[] bytes;
        private final int end;
        private int position;

        Reader(byte[] bytes, int position, int end) {
            this.bytes = bytes;
            this.position = position;
            this.end = end;
        }

        boolean hasMore() {
            return position < end;
        }

        int position() {
            return position;
        }

        int remaining() {
            return end - position;
        }

        byte readByte() throws CorruptCausalLogException {
            if (position >= end) {
                throw new CorruptCausalLogException("Truncated at byte " + position);
            }
            return bytes[position++];
        }

        private long readRaw() throws CorruptCausalLogException {
            long value = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                byte b = readByte();
                if (shift == 63 && (b & 0xFE) != 0) {
                    break;
                }
                value |= (long) (b & 0x7F) << shift;
                if ((b & 0x80) == 0) {
                    return value;
                }
            }
            throw new CorruptCausalLogException(
                    "Variable-length integer too long at byte " + position);
        }

        long readUnsigned() throws CorruptCausalLogException {
            long value = readRaw();
            if (value < 0) {
                throw new CorruptCausalLogException("Value out of range at byte " + position);
            }
            return value;
        }

        int readUnsignedInt() throws CorruptCausalLogException {
            long value = readUnsigned();
            if (value > Integer.MAX_VALUE) {
                throw new CorruptCausalLogException(
                        "Value " + value + " out of range at byte " + position);
            }
            return (int) value;
        }

        long readSigned() throws CorruptCausalLogException {
            long zigZag = readRaw();
            return (zigZag >>> 1) ^ -(zigZag & 1);
        }

        byte[] readBytes(int length) throws CorruptCausalLogException {
            if (length > end - position) {
                throw new CorruptCausalLogException(
                        "Truncated byte array of " + length + " bytes at byte " + position);
            }
            byte[] result = Arrays.copyOfRange(bytes, position, position + length);
            position += length;
            return result;
        }
    }
}
