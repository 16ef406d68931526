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

import java.util.stream.LongStream;

/** The percentile both Nexmark experiments report latencies by. */
@Internal
public final class Percentiles {

    private Percentiles() {}

    /** The {@code p} percentile (0 to 1, nearest rank) of {@code values}, -1 if there are none. */
    public static long of(LongStream values, double p) {
        long[] sorted = values.sorted().toArray();
        return sorted.length == 0
                ? -1
                : sorted[
                        (int)
                                Math.max(
                                        0,
                                        Math.min(
                                                sorted.length - 1,
                                                Math.ceil(p * sorted.length) - 1))];
    }
}
