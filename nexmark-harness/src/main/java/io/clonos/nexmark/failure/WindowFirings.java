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

package io.clonos.nexmark.failure;

import io.clonos.bench.stats.Percentiles;

import org.apache.flink.annotation.Internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The firings of a windowed query's windows, one per window and output partition (one sink subtask,
 * so one join subtask): how late the first result left (the watermark passing the window's end,
 * plus the first timer), and how fast the rest followed (the firing itself). A window's median
 * latency mixes the two; a slow firing and a late watermark have different causes.
 *
 * <p>A window is a due time that many results share (at least {@link #MIN_RESULTS}); Q3's and the
 * synthetic job's results each answer their own event and form none.
 */
@Internal
final class WindowFirings {

    /** Fewer results due at one instant are not a window's firing. */
    static final int MIN_RESULTS = 100;

    /** One window's results in one partition; times in ms since the failure, latencies in ms. */
    record Firing(long dueAt, int partition, int results, long first, long median, long last) {

        /** Results per second from the first to the last; the count if they left at once. */
        long perSecond() {
            return last > first ? results * 1000L / (last - first) : results;
        }
    }

    private WindowFirings() {}

    static List<Firing> of(List<FailureFigures.Output> outputs) {
        Map<Long, Map<Integer, List<Long>>> windows = new TreeMap<>();
        for (FailureFigures.Output output : outputs) {
            windows.computeIfAbsent(output.dueAt(), due -> new TreeMap<>())
                    .computeIfAbsent(output.partition(), partition -> new ArrayList<>())
                    .add(output.latency());
        }
        List<Firing> firings = new ArrayList<>();
        windows.forEach(
                (due, partitions) ->
                        partitions.forEach(
                                (partition, latencies) -> {
                                    if (latencies.size() >= MIN_RESULTS) {
                                        latencies.sort(null);
                                        firings.add(
                                                new Firing(
                                                        due,
                                                        partition,
                                                        latencies.size(),
                                                        latencies.get(0),
                                                        Percentiles.of(
                                                                latencies.stream()
                                                                        .mapToLong(l -> l),
                                                                0.5),
                                                        latencies.get(latencies.size() - 1)));
                                    }
                                }));
        return firings;
    }
}
