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

package io.clonos.streaming.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;

/**
 * The entries of a {@link CausalAsyncWaitOperator} between their arrival and their output, in
 * arrival order. Ordered output emits the longest completed prefix; unordered output emits the
 * completed records before the first watermark in the order they completed, and a watermark once no
 * record before it waits. Either way, what is emitted follows from the arrivals and the order of
 * completions alone, which the causal log holds.
 *
 * <p>Task thread only.
 */
@Internal
final class AsyncEntries<IN, OUT> implements Iterable<AsyncEntries.Entry<IN, OUT>> {

    private final boolean ordered;
    private final List<Entry<IN, OUT>> entries = new ArrayList<>();

    /** How many entries completed so far: the stamp of the next completion. */
    private long completions;

    AsyncEntries(boolean ordered) {
        this.ordered = ordered;
    }

    int size() {
        return entries.size();
    }

    boolean isEmpty() {
        return entries.isEmpty();
    }

    Entry<IN, OUT> addRecord(long id, StreamRecord<IN> input) {
        Entry<IN, OUT> entry = new Entry<>(id, input, null);
        entries.add(entry);
        return entry;
    }

    void addWatermark(Watermark watermark) {
        entries.add(new Entry<>(-1, null, watermark));
    }

    /** Adds an entry as a snapshot held it, completed or not. */
    void restore(Entry<IN, OUT> entry) {
        entries.add(entry);
        completions = Math.max(completions, entry.completedAs + 1);
    }

    /** The waiting record entry {@code id}, or null. */
    @Nullable
    Entry<IN, OUT> waiting(long id) {
        for (Entry<IN, OUT> entry : entries) {
            if (entry.id == id && entry.isRecord() && !entry.isCompleted()) {
                return entry;
            }
        }
        return null;
    }

    void complete(Entry<IN, OUT> entry, Collection<OUT> results) {
        entry.results = results;
        entry.completedAs = completions++;
    }

    /**
     * Hands the entries that may be output now to {@code output}, in output order, and drops them.
     */
    void emitReady(Consumer<Entry<IN, OUT>> output) {
        if (ordered) {
            while (!entries.isEmpty() && entries.get(0).isCompleted()) {
                output.accept(entries.remove(0));
            }
            return;
        }
        while (!entries.isEmpty()) {
            int watermark = 0;
            List<Entry<IN, OUT>> completed = new ArrayList<>();
            boolean waiting = false;
            for (; watermark < entries.size() && entries.get(watermark).isRecord(); watermark++) {
                Entry<IN, OUT> entry = entries.get(watermark);
                if (entry.isCompleted()) {
                    completed.add(entry);
                } else {
                    waiting = true;
                }
            }
            completed.sort(Comparator.comparingLong(e -> e.completedAs));
            for (Entry<IN, OUT> entry : completed) {
                entries.remove(entry);
                output.accept(entry);
            }
            if (waiting || entries.isEmpty()) {
                return;
            }
            // nothing waits before the watermark at the head any more
            output.accept(entries.remove(0));
        }
    }

    @Override
    public Iterator<Entry<IN, OUT>> iterator() {
        return entries.iterator();
    }

    /** A record waiting for its result (or holding it until its turn), or a watermark. */
    static final class Entry<IN, OUT> {
        /** The record's number in its operator, the same in every attempt; -1 for a watermark. */
        final long id;

        @Nullable final StreamRecord<IN> input;
        @Nullable final Watermark watermark;
        @Nullable Collection<OUT> results;
        long completedAs = -1;

        /** When the record times out; negative when it has no deadline yet. */
        long timeoutAt = -1;

        @Nullable ScheduledFuture<?> timeout;

        /**
         * The call of the user function under way for the record: 1 for the first, then retries.
         */
        int attempt = 1;

        /** Whether a retry of the record is due after its back-off; running tasks only. */
        boolean retryPending;

        Entry(long id, @Nullable StreamRecord<IN> input, @Nullable Watermark watermark) {
            this.id = id;
            this.input = input;
            this.watermark = watermark;
        }

        boolean isRecord() {
            return input != null;
        }

        boolean isCompleted() {
            return !isRecord() || results != null;
        }

        @Override
        public String toString() {
            return isRecord()
                    ? "async entry " + id + " (" + input + ")"
                    : "async entry " + watermark;
        }
    }
}
