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

package io.clonos.nexmark;

import io.clonos.bench.probe.ProbeRecords;
import io.clonos.bench.stats.LatencyHistogram;

import org.apache.beam.sdk.nexmark.model.Event;
import org.apache.beam.sdk.transforms.DoFn;
import org.joda.time.Instant;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The overhead experiment's probes: a step after the events' source notes when events enter the
 * query, a step after the query notes when results leave it, each instance into {@link
 * ProbeRecords} files the harness reads once the job ended. A row is a run of consecutive elements
 * within {@value #EVENT_TIME_BUCKET_MS} ms of event time (and, for results, in the same wall-clock
 * millisecond): {the first one's event time, when it passed, how many, which probe}. The generator
 * stamps an event per millisecond of event time and a window's results leave together, so the files
 * hold a tenth of the elements or less, and what the harness keeps from them is a histogram: a run
 * of minutes does not fill the heap the way a list of every element's times did. What the buckets
 * cost in precision: a latency is taken from the first event of a bucket at or after the result's
 * event time, which entered at most a bucket's worth of events after the exact one.
 */
final class SteadyStateProbes {

    static final String ENTERED = "entered";
    static final String LEFT = "left";
    private static final int WIDTH = 4;

    /** How often a probe's rows reach its file at most. */
    private static final long FLUSH_INTERVAL_MS = 200;

    /** How much event time one row covers at most. */
    static final long EVENT_TIME_BUCKET_MS = 10;

    private SteadyStateProbes() {}

    /** Whether an event entered the query already (and its probe flushed its rows). */
    static boolean anyEntered(Path probes) throws IOException {
        return !ProbeRecords.read(probes, ENTERED, WIDTH).isEmpty();
    }

    /**
     * What a run's probes saw in its steady state: the window that starts {@code warmupMillis}
     * after the first event entered and lasts {@code steadyMillis} (or until the last event that
     * entered), the events that entered in it, and the results that left in it with their
     * end-to-end latencies. A result's latency runs from when the events passed its event time to
     * the result leaving: each source subtask's events pass it at the entry of its first event at
     * or after it, and of the subtasks whose events had passed it when the result left, the last
     * one counts (for a window's result, the event that let the watermark pass the window's end;
     * for a per-event result, its event). The subtasks' generators run at their own pace, seconds
     * of event time apart: the first event of any subtask would date a result from a slower one
     * back to when the faster one passed. Results stamped beyond the events that had entered (a
     * global window's) have none.
     */
    record Steady(
            long from,
            long to,
            long events,
            long results,
            long allEvents,
            LatencyHistogram latencies) {

        long millis() {
            return Math.max(0, to - from);
        }

        static Steady read(Path probes, long warmupMillis, long steadyMillis) throws IOException {
            return of(
                    ProbeRecords.read(probes, ENTERED, WIDTH),
                    ProbeRecords.read(probes, LEFT, WIDTH),
                    warmupMillis,
                    steadyMillis);
        }

        /**
         * From rows {event time, when, how many, which probe} of the events that entered and the
         * results that left.
         */
        static Steady of(
                List<long[]> entered, List<long[]> left, long warmupMillis, long steadyMillis) {
            long firstIn = Long.MAX_VALUE;
            long lastIn = Long.MIN_VALUE;
            long allEvents = 0;
            for (long[] row : entered) {
                firstIn = Math.min(firstIn, row[1]);
                lastIn = Math.max(lastIn, row[1]);
                allEvents += row[2];
            }
            if (entered.isEmpty()) {
                return new Steady(0, 0, 0, 0, 0, new LatencyHistogram());
            }
            long from = firstIn + warmupMillis;
            long to = Math.min(from + steadyMillis, lastIn);
            long events = 0;
            for (long[] row : entered) {
                if (row[1] >= from && row[1] < to) {
                    events += row[2];
                }
            }
            Map<Long, List<long[]>> byProbe = new HashMap<>();
            for (long[] row : entered) {
                byProbe.computeIfAbsent(row[3], probe -> new ArrayList<>()).add(row);
            }
            List<Entries> entries = new ArrayList<>();
            byProbe.values().forEach(rows -> entries.add(new Entries(rows)));
            LatencyHistogram latencies = new LatencyHistogram();
            long results = 0;
            for (long[] row : left) {
                if (row[1] < from || row[1] >= to) {
                    continue;
                }
                results += row[2];
                long entry = Long.MIN_VALUE;
                for (Entries probe : entries) {
                    entry = Math.max(entry, probe.entryBefore(row[0], row[1]));
                }
                if (entry != Long.MIN_VALUE) {
                    latencies.record(row[1] - entry, row[2]);
                }
            }
            return new Steady(from, to, events, results, allEvents, latencies);
        }
    }

    /** One probe's earliest entry per event time, sorted by event time. */
    private static final class Entries {
        private final long[] eventTimes;
        private final long[] firstEntries;

        /** The smallest entry at this index or after: where none is old enough, search no more. */
        private final long[] earliestFromHere;

        Entries(List<long[]> rows) {
            long[][] sorted = rows.toArray(new long[0][]);
            Arrays.sort(
                    sorted,
                    Comparator.<long[]>comparingLong(row -> row[0])
                            .thenComparingLong(row -> row[1]));
            int distinct = 0;
            for (int i = 0; i < sorted.length; i++) {
                if (i == 0 || sorted[i][0] != sorted[i - 1][0]) {
                    distinct++;
                }
            }
            eventTimes = new long[distinct];
            firstEntries = new long[distinct];
            int at = -1;
            for (int i = 0; i < sorted.length; i++) {
                if (i == 0 || sorted[i][0] != sorted[i - 1][0]) {
                    at++;
                    eventTimes[at] = sorted[i][0];
                    firstEntries[at] = sorted[i][1];
                }
            }
            earliestFromHere = new long[distinct];
            long earliest = Long.MAX_VALUE;
            for (int i = distinct - 1; i >= 0; i--) {
                earliest = Math.min(earliest, firstEntries[i]);
                earliestFromHere[i] = earliest;
            }
        }

        /**
         * The entry of the first event at or after {@code eventTime} that had entered by {@code
         * now}; {@link Long#MIN_VALUE} if none had.
         */
        long entryBefore(long eventTime, long now) {
            int i = Arrays.binarySearch(eventTimes, eventTime);
            for (i = i < 0 ? -i - 1 : i; i < eventTimes.length; i++) {
                if (earliestFromHere[i] > now) {
                    return Long.MIN_VALUE;
                }
                if (firstEntries[i] <= now) {
                    return firstEntries[i];
                }
            }
            return Long.MIN_VALUE;
        }
    }

    /**
     * Writes a row per run of elements in one bucket of event time (and the same millisecond, if
     * {@code perMillisecond}), flushed with every bundle.
     */
    abstract static class ProbeFn<T, O> extends DoFn<T, O> {
        private final String probes;
        private final String kind;
        private final boolean perMillisecond;
        private transient ProbeRecords.Writer rows;
        private transient long eventTime;
        private transient long first;
        private transient long count;
        private transient long flushed;

        /** Which probe: each source subtask's events pass one. */
        private transient long id;

        ProbeFn(String probes, String kind, boolean perMillisecond) {
            this.probes = probes;
            this.kind = kind;
            this.perMillisecond = perMillisecond;
        }

        @Setup
        public void setup() throws IOException {
            rows = ProbeRecords.create(probes, kind, WIDTH);
            flushed = System.currentTimeMillis();
            id = ThreadLocalRandom.current().nextLong();
        }

        void note(Instant timestamp) throws IOException {
            long now = System.currentTimeMillis();
            long time = timestamp.getMillis();
            if (count > 0
                    && (time / EVENT_TIME_BUCKET_MS != eventTime / EVENT_TIME_BUCKET_MS
                            || perMillisecond && now != first)) {
                rows.write(eventTime, first, count, id);
                count = 0;
            }
            if (count == 0) {
                eventTime = time;
                first = now;
            }
            count++;
            // the rows reach the file while the bundle is open: ClonosRunner finishes a bundle
            // only after 1,000 elements or at a checkpoint, a query's results may take longer,
            // and a cancelled run loses what was not written
            if (now - flushed >= FLUSH_INTERVAL_MS) {
                flush(now);
            }
        }

        @FinishBundle
        public void finishBundle() throws IOException {
            flush(System.currentTimeMillis());
        }

        private void flush(long now) throws IOException {
            if (count > 0) {
                rows.write(eventTime, first, count, id);
                count = 0;
            }
            rows.flush();
            flushed = now;
        }

        @Teardown
        public void teardown() throws IOException {
            if (rows != null) {
                flush(System.currentTimeMillis());
                rows.close();
            }
        }
    }

    /** Notes when events enter the query; passes every event on. */
    static final class FirstEvent extends ProbeFn<Event, Event> {
        FirstEvent(String probes) {
            super(probes, ENTERED, false);
        }

        @ProcessElement
        public void process(
                @Element Event event, @Timestamp Instant timestamp, OutputReceiver<Event> out)
                throws IOException {
            note(timestamp);
            out.output(event);
        }
    }

    /** Notes when results leave the query. */
    static final class LastResult extends ProbeFn<String, Void> {
        LastResult(String probes) {
            super(probes, LEFT, true);
        }

        @ProcessElement
        public void process(@Element String result, @Timestamp Instant timestamp)
                throws IOException {
            note(timestamp);
        }
    }
}
