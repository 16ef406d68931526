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
import java.util.Locale;

/**
 * The failure experiment's figures of one system, from the committed output records: for each, when
 * it reached the broker and the wall-clock time its input was due to arrive; the difference is its
 * end-to-end latency. Time is bucketed as the paper sampled it, {@value #BUCKET_MS} ms at a time.
 *
 * <p>Recovery time follows the paper: from the failure until the latency is back within 10% of its
 * level before it. The level is the mean latency of the results that came out in the {@code
 * baselineMs} before the failure. After it, results are bucketed by when their input was due, not
 * by when they came out, so that a result of the lost subtask whose input was due during the outage
 * counts where the failure hit it: bucketed by when they came out, the surviving subtasks' results
 * keep the first second after a failure in bounds while the lost subtask's are still missing, and a
 * recovery would look finished before its backlog came out. A result that came out after the
 * failure for input due before it (a restart's re-emitted output, whose first attempt was never
 * committed) counts in the first bucket.
 *
 * <p>A bucket is out of bounds when its mean latency exceeds both that level plus 10% and the 99th
 * percentile before the failure: a bucket holds a few results only (Q3 emits a few dozen a second),
 * and without the percentile the jitter of latencies of a few tens of milliseconds would count as
 * not recovered. The system has recovered at the end of the last bucket out of bounds before
 * {@value #STABLE_BUCKETS} buckets in a row are back in bounds (a single noisy bucket later in the
 * run is not the failure's doing), or at the failure if none is. Buckets without output do not
 * count: Q8 emits only when a window closes. The robust variant, for a noisy machine, waits for
 * {@value #ROBUST_STABLE_BUCKETS} buckets (3 s) in a row under the percentile.
 */
@Internal
public final class FailureFigures {

    static final long BUCKET_MS = 333;

    /** How many buckets in a row (with output) must be back in bounds: one second's worth. */
    static final int STABLE_BUCKETS = 3;

    /** The robust variant's: three seconds' worth. */
    static final int ROBUST_STABLE_BUCKETS = 9;

    /**
     * An output record: when it reached the broker, when its input was due, the partition it went
     * to (one per sink subtask), its value.
     */
    public record Output(long appendedAt, long dueAt, int partition, String value) {
        long latency() {
            return appendedAt - dueAt;
        }
    }

    public final String system;
    public final long baselineLatencyMs;
    public final long latencyBoundMs;
    public final long recoveryMs;

    /**
     * The robust variant of the recovery time, for a noisy machine: until the latency is back under
     * the 99th percentile before the failure for three seconds in a row.
     */
    public final long robustRecoveryMs;

    public final long longestGapMs;
    public final long p50BeforeMs;
    public final long p99BeforeMs;
    public final long p99AfterMs;
    public final long results;
    public final List<String> timeline = new ArrayList<>();

    FailureFigures(String system, List<Output> outputs, long killedAt, long baselineMs) {
        this.system = system;
        this.results = outputs.size();
        long first = outputs.stream().mapToLong(Output::appendedAt).min().orElse(killedAt);
        long last = outputs.stream().mapToLong(Output::appendedAt).max().orElse(killedAt);
        long baselineFrom = Math.max(first, killedAt - baselineMs);
        List<Output> after = outputs.stream().filter(o -> o.appendedAt() >= killedAt).toList();
        long lastDue = after.stream().mapToLong(Output::dueAt).max().orElse(killedAt);

        this.baselineLatencyMs = meanLatency(outputs, baselineFrom, killedAt);
        this.p50BeforeMs = percentile(outputs, baselineFrom, killedAt, 0.50);
        this.p99BeforeMs = percentile(outputs, baselineFrom, killedAt, 0.99);
        this.latencyBoundMs = Math.max(Math.round(baselineLatencyMs * 1.1), p99BeforeMs);
        this.recoveryMs =
                recoveredAt(after, killedAt, lastDue, latencyBoundMs, STABLE_BUCKETS) - killedAt;
        this.robustRecoveryMs =
                recoveredAt(after, killedAt, lastDue, p99BeforeMs, ROBUST_STABLE_BUCKETS)
                        - killedAt;
        this.p99AfterMs = Percentiles.of(after.stream().mapToLong(Output::latency), 0.99);

        long previous = killedAt;
        long gap = 0;
        for (long appended :
                outputs.stream()
                        .mapToLong(Output::appendedAt)
                        .filter(t -> t >= killedAt)
                        .sorted()
                        .toArray()) {
            gap = Math.max(gap, appended - previous);
            previous = appended;
        }
        this.longestGapMs = gap;

        for (long from = killedAt - ((killedAt - first) / BUCKET_MS + 1) * BUCKET_MS;
                from <= last;
                from += BUCKET_MS) {
            long count = count(outputs, from, from + BUCKET_MS);
            timeline.add(
                    String.format(
                            Locale.ROOT,
                            "%s,%d,%d,%.0f,%d",
                            system,
                            from - killedAt,
                            count,
                            count * 1000.0 / BUCKET_MS,
                            meanLatency(outputs, from, from + BUCKET_MS)));
        }
    }

    /**
     * The end of the last bucket out of {@code bound} before {@code stable} buckets in a row (with
     * output) are back in it; {@code killedAt} if none is out. The buckets are of the results that
     * came out after the failure, by when their input was due, or the failure if before.
     */
    private static long recoveredAt(
            List<Output> after, long killedAt, long lastDue, long bound, int stable) {
        long recoveredAt = killedAt;
        int inBounds = 0;
        for (long from = killedAt; from <= lastDue && inBounds < stable; from += BUCKET_MS) {
            long bucketFrom = from == killedAt ? Long.MIN_VALUE : from;
            long to = from + BUCKET_MS;
            long latency =
                    Math.round(
                            after.stream()
                                    .filter(o -> o.dueAt() >= bucketFrom && o.dueAt() < to)
                                    .mapToLong(Output::latency)
                                    .average()
                                    .orElse(-1));
            if (latency > bound) {
                recoveredAt = to;
                inBounds = 0;
            } else if (latency >= 0) {
                inBounds++;
            }
        }
        return recoveredAt;
    }

    private static long percentile(List<Output> outputs, long from, long to, double p) {
        return Percentiles.of(
                outputs.stream()
                        .filter(o -> o.appendedAt() >= from && o.appendedAt() < to)
                        .mapToLong(Output::latency),
                p);
    }

    /**
     * When the first result written to {@code partition} after the failure came out; -1 if none.
     */
    static long firstOutputAfter(List<Output> outputs, long killedAt, int partition) {
        return outputs.stream()
                .filter(o -> o.partition() == partition && o.appendedAt() >= killedAt)
                .mapToLong(Output::appendedAt)
                .min()
                .orElse(-1);
    }

    static final String TIMELINE_HEADER =
            "system,ms_since_kill,results,results_per_second,mean_latency_ms";

    private static long count(List<Output> outputs, long from, long to) {
        return outputs.stream().filter(o -> o.appendedAt() >= from && o.appendedAt() < to).count();
    }

    /** Mean latency of the output that reached the broker in [from, to), -1 if none did. */
    static long meanLatency(List<Output> outputs, long from, long to) {
        return Math.round(
                outputs.stream()
                        .filter(o -> o.appendedAt() >= from && o.appendedAt() < to)
                        .mapToLong(Output::latency)
                        .average()
                        .orElse(-1));
    }

    String json() {
        return String.format(
                Locale.ROOT,
                "{\"results\":%d,\"baselineLatencyMs\":%d,\"latencyBoundMs\":%d,\"recoveryMs\":%d,\"robustRecoveryMs\":%d,\"longestOutputGapMs\":%d,\"latencyP50BeforeMs\":%d,\"latencyP99BeforeMs\":%d,\"latencyP99AfterMs\":%d}",
                results,
                baselineLatencyMs,
                latencyBoundMs,
                recoveryMs,
                robustRecoveryMs,
                longestGapMs,
                p50BeforeMs,
                p99BeforeMs,
                p99AfterMs);
    }
}
