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

import io.clonos.runtime.causal.SharedDelta;

import org.apache.flink.annotation.Internal;

import org.apache.kafka.clients.producer.ProducerRecord;

import javax.annotation.Nullable;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * What a writer's predecessors published after the restored checkpoint, as read back from Kafka:
 * the positions found, each with a digest of its record's topic, key and value, and the
 * determinants those records carried. A writer asks for positions in increasing order ({@link
 * #digestAt}), as it regenerates them.
 */
@Internal
final class PublishedOutput {

    /** Returned by {@link #digestAt} for a position nobody published. */
    static final long NOT_PUBLISHED = 0;

    private final long[] positions;
    private final long[] digests;
    private final List<SharedDelta> determinants;
    @Nullable private final String whyNoDeterminants;
    private int cursor;

    /**
     * {@code positions} and {@code digests} pairwise (sorted here by position); {@code
     * whyNoDeterminants} when the determinants found could not be read.
     */
    PublishedOutput(
            long[] positions,
            long[] digests,
            List<SharedDelta> determinants,
            @Nullable String whyNoDeterminants) {
        Integer[] order = new Integer[positions.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Long.compare(positions[a], positions[b]));
        this.positions = new long[positions.length];
        this.digests = new long[positions.length];
        for (int i = 0; i < order.length; i++) {
            this.positions[i] = positions[order[i]];
            this.digests[i] = digests[order[i]];
        }
        this.determinants = List.copyOf(determinants);
        this.whyNoDeterminants = whyNoDeterminants;
    }

    static PublishedOutput nothing() {
        return new PublishedOutput(new long[0], new long[0], List.of(), null);
    }

    /** How many records were found. */
    int records() {
        return positions.length;
    }

    /** The highest position found, or -1. */
    long lastPosition() {
        return positions.length == 0 ? -1 : positions[positions.length - 1];
    }

    List<SharedDelta> determinants() {
        return determinants;
    }

    /** Why the records' determinants cannot be used (corrupt headers); empty when they can. */
    Optional<String> whyNoDeterminants() {
        return Optional.ofNullable(whyNoDeterminants);
    }

    /**
     * The digest of the record published at {@code position}, or {@link #NOT_PUBLISHED}; positions
     * must be asked for in increasing order.
     */
    long digestAt(long position) {
        while (cursor < positions.length && positions[cursor] < position) {
            cursor++;
        }
        return cursor < positions.length && positions[cursor] == position
                ? digests[cursor]
                : NOT_PUBLISHED;
    }

    /**
     * A digest of what a consumer sees of a record: its topic, key and value (never {@link
     * #NOT_PUBLISHED}).
     */
    static long digest(String topic, byte[] key, byte[] value) {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("Every Java platform has SHA-256", e);
        }
        sha.update(topic.getBytes(StandardCharsets.UTF_8));
        update(sha, key);
        update(sha, value);
        byte[] hash = sha.digest();
        long digest = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            digest = (digest << 8) | (hash[i] & 0xff);
        }
        return digest == NOT_PUBLISHED ? 1 : digest;
    }

    static long digest(ProducerRecord<byte[], byte[]> record) {
        return digest(record.topic(), record.key(), record.value());
    }

    private static void update(MessageDigest sha, byte[] bytes) {
        int length = bytes == null ? -1 : bytes.length;
        sha.update(
                new byte[] {
                    (byte) (length >>> 24),
                    (byte) (length >>> 16),
                    (byte) (length >>> 8),
                    (byte) length
                });
        if (bytes != null) {
            sha.update(bytes);
        }
    }
}
