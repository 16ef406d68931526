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

package io.clonos.cli;

import org.apache.flink.annotation.Internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Reads the output of the example job {@code RunningSumJob} (lines {@code key,count,sum} in part
 * files) and checks it against what the numbers 1..count must give.
 */
@Internal
public final class RunningSumOutput {

    /** The last running count and sum of one key. */
    public static final class KeyTotal {
        public final long count;
        public final long sum;

        KeyTotal(long count, long sum) {
            this.count = count;
            this.sum = sum;
        }
    }

    private RunningSumOutput() {}

    /** Per key, the line with the highest count. */
    public static Map<Long, KeyTotal> finalTotals(Path directory) throws IOException {
        Map<Long, KeyTotal> totals = new TreeMap<>();
        List<Path> parts;
        try (Stream<Path> files = Files.list(directory)) {
            parts =
                    files.filter(f -> f.getFileName().toString().startsWith("part-"))
                            .collect(Collectors.toList());
        }
        for (Path part : parts) {
            for (String line : Files.readAllLines(part)) {
                String[] fields = line.split(",");
                if (fields.length != 3) {
                    throw new IOException("Malformed line in " + part + ": " + line);
                }
                long key = Long.parseLong(fields[0]);
                KeyTotal total = new KeyTotal(Long.parseLong(fields[1]), Long.parseLong(fields[2]));
                totals.merge(key, total, (a, b) -> a.count >= b.count ? a : b);
            }
        }
        return totals;
    }

    /**
     * Per key {@code k < keys}, the count and sum of the numbers n in 1..count with n % keys == k.
     */
    public static Map<Long, KeyTotal> expectedTotals(long count, int keys) {
        Map<Long, KeyTotal> expected = new TreeMap<>();
        for (long key = 0; key < keys; key++) {
            long first = key == 0 ? keys : key;
            long n = first > count ? 0 : (count - first) / keys + 1;
            long last = first + (n - 1) * keys;
            expected.put(key, new KeyTotal(n, n == 0 ? 0 : n * (first + last) / 2));
        }
        expected.values().removeIf(total -> total.count == 0);
        return expected;
    }
}
