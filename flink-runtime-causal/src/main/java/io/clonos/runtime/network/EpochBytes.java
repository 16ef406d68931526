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

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.buffer.Buffer;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The data bytes of one epoch of one producer's stream as a consumer received them: how many, and
 * their checksum. A producer recovered with determinants checks the bytes it skips against it, so
 * that a replay that did not reproduce its predecessor's output is caught before it reaches the
 * consumer, instead of silently losing or repeating records.
 */
@Internal
public final class EpochBytes {

    private long bytes;
    private final CRC32C checksum = new CRC32C();

    public EpochBytes() {}

    void add(Buffer buffer) {
        bytes += buffer.readableBytes();
        checksum.update(buffer.getNioBufferReadable());
    }

    /** Adds the first {@code length} readable bytes of {@code buffer}. */
    void add(Buffer buffer, int length) {
        bytes += length;
        ByteBuffer readable = buffer.getNioBufferReadable();
        readable.limit(readable.position() + length);
        checksum.update(readable);
    }

    public long bytes() {
        return bytes;
    }

    public long checksum() {
        return checksum.getValue();
    }
}
