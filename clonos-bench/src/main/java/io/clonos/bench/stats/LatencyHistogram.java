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
package io.clonos.bench.stats;

import org.apache.flink.annotation.Internal;

import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * End-to-end latencies in milliseconds, counted per millisecond up to {@link #MAX_MS} (and one
 * bucket above it): its memory does not grow with the run, which a list of every record's times did
 * (a run of 20 million records never finished). The benchmark's latencies come from the wall clock
 * in milliseconds, so the buckets lose nothing.
 */
@Internal
public final class LatencyHistogram implements Serializable {

    private static final long serialVersionUID = 1L;

    public static final int MAX_MS = 120_000;

    private final long[] counts = new long[MAX_MS + 2];
    private long total;

    public void record(long millis) {
        record(millis, 1);
    }

    /** Records {@code count} latencies of {@code millis} each. */
    public void record(long millis, long count) {
        int bucket = (int) Math.max(0, Math.min(millis, MAX_MS + 1));
        counts[bucket] += count;
        total += count;
    }

    public void add(LatencyHistogram other) {
        for (int i = 0; i < counts.length; i++) {
            counts[i] += other.counts[i];
        }
        total += other.total;
    }

    public long count() {
        return total;
    }

    /** The latency at quantile {@code q} (0 to 1); {@link #MAX_MS}+1 means above the range. */
    public long quantile(double q) {
        if (total == 0) {
            return -1;
        }
        long rank = (long) Math.ceil(q * total);
        long seen = 0;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= Math.max(1, rank)) {
                return i;
            }
        }
        return MAX_MS + 1;
    }

    /** Writes the non-empty buckets, a line "millis count" each. */
    public void write(Path file) throws IOException {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] > 0) {
                lines.add(i + " " + counts[i]);
            }
        }
        Files.write(file, lines, StandardCharsets.UTF_8);
    }

    public static LatencyHistogram read(Path file) throws IOException {
        LatencyHistogram histogram = new LatencyHistogram();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String[] bucket = line.trim().split(" ");
            long count = Long.parseLong(bucket[1]);
            histogram.counts[Integer.parseInt(bucket[0])] += count;
            histogram.total += count;
        }
        return histogram;
    }
}
