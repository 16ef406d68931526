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

package io.clonos.bench.experiment;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.LongPredicate;
import java.util.stream.LongStream;

/**
 * The figures of one run of the recovery benchmark, computed from what the sinks received: for
 * every element its key, sequence number, creation time and arrival time.
 */
@Internal
public final class RecoveryFigures {

    static final long BUCKET_MS = 500;
    static final long BASELINE_MS = 3000;

    /** How long latency must stay under its pre-failure p99 to count as recovered (robust). */
    static final long ROBUST_MS = 3000;

    public final String mode;
    public final long baselineLatencyMs;
    public final long recoveredTaskEmitsAfterMs;
    public final long recoveryMs;

    /**
     * The robust variant of the recovery time, for a noisy machine: from the failure until the mean
     * latency stays under the p99 of the latencies before the failure for {@link #ROBUST_MS},
     * counted from when the lost keys reach the sink again (while they are silent, the mean of the
     * others says nothing about them).
     */
    public final long robustRecoveryMs;

    /** The longest time after the failure in which nothing reached the sink. */
    public final long maxOutputGapMs;

    public final long unaffectedRecoveryMs;
    public final long unaffectedMaxStallMs;
    public final long lost;
    public final long duplicated;
    public final List<String> timeline = new ArrayList<>();

    /**
     * The figures of a run of the synthetic job with {@code settings}, whose window subtasks {@code
     * affectedWindows} ran on the lost TaskManager.
     */
    public static RecoveryFigures of(
            String mode,
            List<long[]> received,
            KillSettings settings,
            long killedAt,
            Set<Integer> affectedWindows) {
        int maxParallelism =
                KeyGroupRangeAssignment.computeDefaultMaxParallelism(settings.parallelism);
        return new RecoveryFigures(
                mode,
                received,
                settings.records,
                seq ->
                        SyntheticJob.mustArrive(
                                seq, settings.records, settings.parallelism, settings.rate),
                killedAt,
                key ->
                        affectedWindows.contains(
                                KeyGroupRangeAssignment.assignKeyToParallelOperator(
                                        key, maxParallelism, settings.parallelism)));
    }

    /**
     * @param mustArrive the sequence numbers that must arrive: the last records of each source
     *     subtask may sit in a processing-time window that never fires, since Flink does not fire
     *     processing-time timers when the input ends
     */
    public RecoveryFigures(
            String mode,
            List<long[]> received,
            long records,
            LongPredicate mustArrive,
            long killedAt,
            LongPredicate affectedKey) {
        this.mode = mode;
        Set<Long> distinct = new HashSet<>();
        for (long[] r : received) {
            distinct.add(r[1]);
        }
        this.duplicated = received.size() - distinct.size();
        long expected = LongStream.range(0, records).filter(mustArrive).count();
        this.lost = expected - distinct.stream().filter(mustArrive::test).count();

        this.baselineLatencyMs =
                meanLatency(received, killedAt - BASELINE_MS, killedAt, key -> true);
        long end = received.stream().mapToLong(r -> r[3]).max().orElse(killedAt);
        this.recoveryMs = recovery(received, killedAt, end, key -> true);
        this.maxOutputGapMs = longestGap(received, killedAt, end, key -> true);
        this.unaffectedRecoveryMs = recovery(received, killedAt, end, affectedKey.negate());
        this.unaffectedMaxStallMs = longestGap(received, killedAt, end, affectedKey.negate());
        this.recoveredTaskEmitsAfterMs =
                endOfLongestGap(received, killedAt, end, affectedKey) - killedAt;
        this.robustRecoveryMs =
                robustRecovery(received, killedAt, killedAt + recoveredTaskEmitsAfterMs, end);

        for (long from = killedAt - BASELINE_MS; from < end; from += BUCKET_MS) {
            long to = from + BUCKET_MS;
            timeline.add(
                    String.format(
                            Locale.ROOT,
                            "%s,%d,%d,%d,%d,%d",
                            mode,
                            from - killedAt,
                            count(received, from, to, key -> true),
                            meanLatency(received, from, to, key -> true),
                            meanLatency(received, from, to, affectedKey),
                            meanLatency(received, from, to, affectedKey.negate())));
        }
    }

    /**
     * Paper's definition: from the failure until latency is back within 10% of its level before.
     */
    private long recovery(List<long[]> received, long killedAt, long end, LongPredicate keys) {
        long baseline = meanLatency(received, killedAt - BASELINE_MS, killedAt, keys);
        long recoveredAt = killedAt;
        for (long from = killedAt; from + BUCKET_MS <= end; from += BUCKET_MS) {
            long latency = meanLatency(received, from, from + BUCKET_MS, keys);
            if (latency < 0 || latency > baseline * 1.1) {
                recoveredAt = from + BUCKET_MS;
            }
        }
        return recoveredAt - killedAt;
    }

    /**
     * The robust variant: the start of the first {@link #ROBUST_MS} from {@code back} (the lost
     * keys' first output, rounded down to a bucket) whose every bucket has output with a mean
     * latency under the p99 of the latencies before the failure; relative to the failure.
     */
    private static long robustRecovery(List<long[]> received, long killedAt, long back, long end) {
        long[] before =
                received.stream()
                        .filter(r -> r[3] >= killedAt - BASELINE_MS && r[3] < killedAt)
                        .mapToLong(r -> r[3] - r[2])
                        .sorted()
                        .toArray();
        if (before.length == 0) {
            return -1;
        }
        long p99 = before[(int) Math.min(before.length - 1, Math.ceil(before.length * 0.99) - 1)];
        long inBoundsSince = -1;
        long first = killedAt + Math.max(0, (back - killedAt) / BUCKET_MS * BUCKET_MS);
        for (long from = first; from + BUCKET_MS <= end; from += BUCKET_MS) {
            long latency = meanLatency(received, from, from + BUCKET_MS, key -> true);
            if (latency < 0 || latency > p99) {
                inBoundsSince = -1;
            } else {
                if (inBoundsSince < 0) {
                    inBoundsSince = from;
                }
                if (from + BUCKET_MS - inBoundsSince >= ROBUST_MS) {
                    return inBoundsSince - killedAt;
                }
            }
        }
        return -1;
    }

    private static long longestGap(List<long[]> received, long from, long to, LongPredicate keys) {
        long previous = from;
        long longest = 0;
        for (long arrival : arrivals(received, from, to, keys)) {
            longest = Math.max(longest, arrival - previous);
            previous = arrival;
        }
        return longest;
    }

    private static long endOfLongestGap(
            List<long[]> received, long from, long to, LongPredicate keys) {
        long previous = from;
        long longest = -1;
        long end = from;
        for (long arrival : arrivals(received, from, to, keys)) {
            if (arrival - previous > longest) {
                longest = arrival - previous;
                end = arrival;
            }
            previous = arrival;
        }
        return end;
    }

    private static long[] arrivals(List<long[]> received, long from, long to, LongPredicate keys) {
        return received.stream()
                .filter(r -> keys.test(r[0]) && r[3] >= from && r[3] <= to)
                .mapToLong(r -> r[3])
                .sorted()
                .toArray();
    }

    private static long count(List<long[]> received, long from, long to, LongPredicate keys) {
        return received.stream().filter(r -> keys.test(r[0]) && r[3] >= from && r[3] < to).count();
    }

    /** Mean end-to-end latency of what arrived in [from, to), -1 if nothing arrived. */
    private static long meanLatency(List<long[]> received, long from, long to, LongPredicate keys) {
        return Math.round(
                received.stream()
                        .filter(r -> keys.test(r[0]) && r[3] >= from && r[3] < to)
                        .mapToLong(r -> r[3] - r[2])
                        .average()
                        .orElse(-1));
    }

    public String json() {
        return String.format(
                Locale.ROOT,
                "{\"baseline_latency_ms\":%d,\"recovered_task_emits_after_ms\":%d,\"recovery_ms\":%d,\"recovery_robust_ms\":%d,\"max_output_gap_ms\":%d,\"unaffected_recovery_ms\":%d,\"unaffected_max_stall_ms\":%d,\"lost\":%d,\"duplicated\":%d}",
                baselineLatencyMs,
                recoveredTaskEmitsAfterMs,
                recoveryMs,
                robustRecoveryMs,
                maxOutputGapMs,
                unaffectedRecoveryMs,
                unaffectedMaxStallMs,
                lost,
                duplicated);
    }
}
