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

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The results a run's windows must have, a count and a sum per key and window start, as the
 * examples' window jobs know them beforehand, checked against the lines they committed ({@code
 * key,windowStart,count,sum}, more fields after it left alone).
 */
final class WindowResults {

    private final Map<String, long[]> expected = new TreeMap<>();

    /**
     * Event {@code value} of key {@code key} falls into the window that starts at {@code start}.
     */
    void add(long key, long start, long value) {
        long[] window = expected.computeIfAbsent(key + "," + start, w -> new long[2]);
        window[0]++;
        window[1] += value;
    }

    /** Windows lost, repeated or with another result; empty if none. */
    List<String> violations(List<String> lines) {
        List<String> violations = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : lines) {
            String[] f = line.split(",");
            String window = f[0] + "," + f[1];
            if (seen.merge(window, 1, Integer::sum) > 1) {
                violations.add("repeated window " + line);
            }
            long[] result = expected.get(window);
            if (result == null
                    || result[0] != Long.parseLong(f[2])
                    || result[1] != Long.parseLong(f[3])) {
                violations.add(
                        "wrong window "
                                + line
                                + (result == null
                                        ? " (none expected)"
                                        : " (expected " + result[0] + "," + result[1] + ")"));
            }
        }
        for (String window : expected.keySet()) {
            if (!seen.containsKey(window)) {
                violations.add("lost window " + window);
            }
        }
        return violations;
    }
}
