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
package io.clonos.examples;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.java.tuple.Tuple2;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Per-key hash chains, the output format of jobs that check exactly-once processing: every effect
 * on a key's state is a link {@code key,sequence,previous digest,digest,input}. A correct output
 * has, per key, links 1, 2, 3, ... each continuing the previous one's digest, and every input
 * taking effect exactly once. A recovery that lost work leaves a gap, one that repeated work
 * repeats a sequence number or an input, one that did not reproduce its predecessor's choices
 * breaks a digest.
 */
public final class HashChains {

    private HashChains() {}

    /** Extends the key's chain in {@code state} by {@code value}; returns the link. */
    public static String link(
            ValueState<Tuple2<Long, Long>> state, long key, long value, String input)
            throws IOException {
        Tuple2<Long, Long> previous = state.value();
        long seq = previous == null ? 1 : previous.f0 + 1;
        long prevDigest = previous == null ? 0 : previous.f1;
        long digest = mix(prevDigest, value);
        state.update(Tuple2.of(seq, digest));
        return key + "," + seq + "," + prevDigest + "," + digest + "," + input;
    }

    public static long mix(long a, long b) {
        long h = a * 0x9E3779B97F4A7C15L + b;
        h ^= h >>> 31;
        h *= 0xBF58476D1CE4E5B9L;
        return h ^ (h >>> 29);
    }

    public static long keyOf(String link) {
        return Long.parseLong(link.substring(0, link.indexOf(',')));
    }

    public static long digestOf(String link) {
        return Long.parseLong(link.split(",")[3]);
    }

    /**
     * What is wrong with the links, in the order the sink received them (at most 20 findings):
     * gaps, repeats, broken digests, inputs seen twice, and inputs {@code source:1} to {@code
     * source:count} of each source that never took effect.
     */
    public static List<String> violations(Iterable<String> links, String[] sources, long count) {
        List<String> findings = audit(links, sources, count).findings();
        return findings.size() > 20 ? findings.subList(0, 20) : findings;
    }

    /**
     * The links checked and counted: inputs lost (never took effect, or a gap in a chain),
     * duplicated (an input, or a link's place in its chain, seen twice) and diverged (a link that
     * does not continue its chain's digest).
     */
    public static Audit audit(Iterable<String> links, String[] sources, long count) {
        List<String> findings = new ArrayList<>();
        long duplicated = 0;
        long diverged = 0;
        long gaps = 0;
        long total = 0;
        Map<Long, Long> lastSeq = new HashMap<>();
        Map<Long, Long> lastDigest = new HashMap<>();
        Set<String> inputs = new HashSet<>();
        for (String line : links) {
            total++;
            String[] f = line.split(",");
            long key = Long.parseLong(f[0]);
            long seq = Long.parseLong(f[1]);
            long prev = Long.parseLong(f[2]);
            long expectedSeq = lastSeq.getOrDefault(key, 0L) + 1;
            if (seq != expectedSeq) {
                findings.add("key " + key + ": link " + seq + " follows link " + (expectedSeq - 1));
                if (seq < expectedSeq) {
                    duplicated++;
                } else {
                    gaps += seq - expectedSeq;
                }
            } else if (prev != lastDigest.getOrDefault(key, 0L)) {
                findings.add(
                        "key " + key + ": link " + seq + " does not continue the chain (diverged)");
                diverged++;
            }
            lastSeq.put(key, seq);
            lastDigest.put(key, Long.parseLong(f[3]));
            if (!inputs.add(f[4])) {
                findings.add("input " + f[4] + " took effect twice");
                duplicated++;
            }
        }
        List<String> missing = missing(inputs, sources, count);
        for (String lost : missing) {
            findings.add("input " + lost + " never took effect");
        }
        // a lost source record leaves a gap in its key's chain too: count it once; a gap without
        // a missing source record is a lost timer's record
        return new Audit(total, Math.max(missing.size(), gaps), duplicated, diverged, findings);
    }

    /** What {@link #audit} found. */
    public record Audit(
            long links, long lost, long duplicated, long diverged, List<String> findings) {
        public boolean exactlyOnce() {
            return findings.isEmpty();
        }
    }

    /**
     * The inputs {@code source:1} to {@code source:count} of each source that no link took in
     * (at-least-once).
     */
    public static List<String> lostInputs(Iterable<String> links, String[] sources, long count) {
        Set<String> inputs = new HashSet<>();
        for (String line : links) {
            inputs.add(line.split(",")[4]);
        }
        return missing(inputs, sources, count);
    }

    private static List<String> missing(Set<String> inputs, String[] sources, long count) {
        List<String> missing = new ArrayList<>();
        for (String source : sources) {
            for (long n = 1; n <= count; n++) {
                if (!inputs.contains(source + ":" + n)) {
                    missing.add(source + ":" + n);
                }
            }
        }
        return missing;
    }
}
