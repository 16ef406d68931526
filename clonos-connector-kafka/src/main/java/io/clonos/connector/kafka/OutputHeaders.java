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

package io.clonos.connector.kafka;

import org.apache.flink.annotation.Internal;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

import javax.annotation.Nullable;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The headers that {@link ClonosKafkaSink} adds to every record it publishes: its writer and its
 * position in that writer's output ({@value #POSITION}, 16 bytes of writer id and an 8-byte
 * position), and on the first record of each partition in a publication the determinants not yet
 * durable in Kafka ({@value #DETERMINANTS}). A record republished with other contents than its
 * predecessor's at the same position carries {@value #DIVERGENT}. Consumers may ignore them all.
 */
@Internal
public final class OutputHeaders {

    /** The writer and the record's position in its output. */
    public static final String POSITION = "clonos.position";

    /** Determinants, as {@code DeltaLists#toBytes}. */
    public static final String DETERMINANTS = "clonos.determinants";

    /** A record whose position its writer had published before with other contents. */
    public static final String DIVERGENT = "clonos.divergent";

    static final int WRITER_ID_BYTES = 16;

    private OutputHeaders() {}

    static byte[] position(byte[] writerId, long position) {
        return ByteBuffer.allocate(WRITER_ID_BYTES + Long.BYTES)
                .put(writerId)
                .putLong(position)
                .array();
    }

    /**
     * The position of a record of {@code writerId} in that writer's output; -1 for a record of
     * another writer or without the header.
     */
    static long positionOf(Headers headers, byte[] writerId) {
        Header header = headers.lastHeader(POSITION);
        if (header == null || header.value() == null) {
            return -1;
        }
        byte[] value = header.value();
        if (value.length != WRITER_ID_BYTES + Long.BYTES
                || !Arrays.equals(value, 0, WRITER_ID_BYTES, writerId, 0, WRITER_ID_BYTES)) {
            return -1;
        }
        return ByteBuffer.wrap(value, WRITER_ID_BYTES, Long.BYTES).getLong();
    }

    @Nullable
    static byte[] determinantsOf(Headers headers) {
        Header header = headers.lastHeader(DETERMINANTS);
        return header == null ? null : header.value();
    }
}
