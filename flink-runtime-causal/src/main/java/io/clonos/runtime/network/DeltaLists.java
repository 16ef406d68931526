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

import io.clonos.runtime.causal.CausalLogDelta;
import io.clonos.runtime.causal.CorruptCausalLogException;
import io.clonos.runtime.causal.SharedDelta;

import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The wire form of a list of shared causal log deltas, used by the Clonos events: per delta its
 * distance and its checksummed serialized form, which the receiver decodes. The same form carries
 * determinants outside the network: a sink that stores them beside its output ({@link #toBytes},
 * {@link #fromBytes}).
 */
@Internal
public final class DeltaLists {

    /** A delta list longer than this is corrupt, not large: it would not fit a network buffer. */
    private static final int MAX_DELTAS = 1 << 20;

    private DeltaLists() {}

    static void write(List<byte[]> serialized, DataOutputView out) throws IOException {
        out.writeInt(serialized.size());
        for (byte[] delta : serialized) {
            out.writeInt(delta.length);
            out.write(delta);
        }
    }

    static List<byte[]> read(DataInputView in) throws IOException {
        int count = in.readInt();
        if (count < 0 || count > MAX_DELTAS) {
            throw new IOException("Corrupt causal log event: " + count + " deltas");
        }
        List<byte[]> serialized = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int length = in.readInt();
            if (length < 0) {
                throw new IOException("Corrupt causal log event: a delta of " + length + " bytes");
            }
            byte[] delta = new byte[length];
            in.readFully(delta);
            serialized.add(delta);
        }
        return serialized;
    }

    /** Each entry: a 4-byte distance, then the serialized delta. */
    static List<SharedDelta> decode(List<byte[]> serialized) throws CorruptCausalLogException {
        List<SharedDelta> deltas = new ArrayList<>(serialized.size());
        for (byte[] entry : serialized) {
            if (entry.length < 4) {
                throw new CorruptCausalLogException(
                        "A shared delta of " + entry.length + " bytes is too short");
            }
            int distance = ByteBuffer.wrap(entry, 0, 4).getInt();
            if (distance < 0) {
                throw new CorruptCausalLogException("A shared delta with distance " + distance);
            }
            deltas.add(
                    new SharedDelta(
                            CausalLogDelta.deserialize(Arrays.copyOfRange(entry, 4, entry.length)),
                            distance));
        }
        return deltas;
    }

    static List<byte[]> encode(List<SharedDelta> deltas) {
        List<byte[]> serialized = new ArrayList<>(deltas.size());
        for (SharedDelta shared : deltas) {
            byte[] delta = shared.delta().serialize();
            serialized.add(
                    ByteBuffer.allocate(4 + delta.length)
                            .putInt(shared.distance())
                            .put(delta)
                            .array());
        }
        return serialized;
    }

    /** The wire form of {@code deltas} as one byte array. */
    public static byte[] toBytes(List<SharedDelta> deltas) {
        DataOutputSerializer out = new DataOutputSerializer(64);
        try {
            write(encode(deltas), out);
        } catch (IOException e) {
            throw new IllegalStateException("Writing to memory failed", e);
        }
        return out.getCopyOfBuffer();
    }

    /** The deltas of {@link #toBytes}; bytes that are not such a list are corrupt. */
    public static List<SharedDelta> fromBytes(byte[] bytes) throws CorruptCausalLogException {
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        List<byte[]> serialized;
        try {
            serialized = read(in);
        } catch (IOException e) {
            throw new CorruptCausalLogException(
                    "A list of shared deltas cannot be read: " + e.getMessage());
        }
        if (in.available() != 0) {
            throw new CorruptCausalLogException(
                    "A list of shared deltas is followed by " + in.available() + " more bytes");
        }
        return decode(serialized);
    }
}
