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
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32;

/**
 * A piece of one causal log: the encoded determinants of log {@code log} in epoch {@code epoch},
 * starting at byte {@code offset} of that epoch. Deltas are what rides downstream with the data;
 * applying the same delta twice, or deltas that overlap, is harmless (see {@link CausalLog}).
 *
 * <p>Serialized form, version 3: version byte, log id (vertex name as length and UTF-8 bytes,
 * subtask, subpartition), epoch, offset, length, the bytes, then a CRC-32 of everything before it.
 * Integers are variable-length; a delta whose checksum, version or lengths do not add up is
 * rejected with {@link CorruptCausalLogException}.
 */
@Internal
public record CausalLogDelta(CausalLogId log, long epoch, long offset, byte[] bytes) {

    static final byte VERSION = 3;

    public CausalLogDelta {
        if (epoch < 0 || offset < 0) {
            throw new IllegalArgumentException("epoch and offset must not be negative");
        }
        bytes = bytes.clone();
    }

    @Override
    public byte[] bytes() {
        return bytes.clone();
    }

    /** The offset just after this delta. */
    public long end() {
        return offset + bytes.length;
    }

    public byte[] serialize() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length + 32);
        out.write(VERSION);
        byte[] vertex = log.vertex().getBytes(StandardCharsets.UTF_8);
        VarInts.writeUnsigned(out, vertex.length);
        out.write(vertex, 0, vertex.length);
        VarInts.writeUnsigned(out, log.subtask());
        VarInts.writeSigned(out, log.subpartition());
        VarInts.writeUnsigned(out, epoch);
        VarInts.writeUnsigned(out, offset);
        VarInts.writeUnsigned(out, bytes.length);
        out.write(bytes, 0, bytes.length);
        CRC32 crc = new CRC32();
        crc.update(out.toByteArray());
        byte[] checksum = ByteBuffer.allocate(4).putInt((int) crc.getValue()).array();
        out.write(checksum, 0, 4);
        return out.toByteArray();
    }

    public static CausalLogDelta deserialize(byte[] serialized) throws CorruptCausalLogException {
        if (serialized.length < 5) {
            throw new CorruptCausalLogException(
                    "A causal log delta of " + serialized.length + " bytes is too short");
        }
        CRC32 crc = new CRC32();
        crc.update(serialized, 0, serialized.length - 4);
        int expected = ByteBuffer.wrap(serialized, serialized.length - 4, 4).getInt();
        if ((int) crc.getValue() != expected) {
            throw new CorruptCausalLogException("Checksum mismatch in a causal log delta");
        }
        if (serialized[0] != VERSION) {
            throw new CorruptCausalLogException(
                    "Unknown causal log delta version " + serialized[0]);
        }
        VarInts.Reader in = new VarInts.Reader(serialized, 1, serialized.length - 4);
        String vertex = new String(in.readBytes(in.readUnsignedInt()), StandardCharsets.UTF_8);
        int subtask = in.readUnsignedInt();
        long subpartition = in.readSigned();
        long epoch = in.readUnsigned();
        long offset = in.readUnsigned();
        byte[] bytes = in.readBytes(in.readUnsignedInt());
        if (in.hasMore()) {
            throw new CorruptCausalLogException("Trailing bytes in a causal log delta");
        }
        if (vertex.isEmpty()
                || subpartition < CausalLogId.MAIN
                || subpartition > Integer.MAX_VALUE) {
            throw new CorruptCausalLogException("Bad log id in a causal log delta");
        }
        return new CausalLogDelta(
                new CausalLogId(vertex, subtask, (int) subpartition), epoch, offset, bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CausalLogDelta other
                && log.equals(other.log)
                && epoch == other.epoch
                && offset == other.offset
                && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * (31 * log.hashCode() + Long.hashCode(epoch)) + Long.hashCode(offset))
                + Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return "CausalLogDelta{"
                + log
                + ", epoch "
                + epoch
                + ", bytes "
                + offset
                + ".."
                + end()
                + '}';
    }
}
