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

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.source.reader.RecordsBySplits;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;
import org.apache.flink.connector.base.source.reader.SingleThreadMultiplexSourceReaderBase;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsAddition;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsChange;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The numbers 1 to {@code count} in {@code splits} splits (split {@code i} holds the numbers {@code
 * n} with {@code (n - 1) mod splits == i}, in order), read the way Kafka's reader reads partitions:
 * a fetcher thread polls the reader's splits in batches of random sizes from a randomly chosen
 * split, so every run interleaves the splits differently; each split's own order never changes. The
 * enumerator gives subtask {@code s} the splits {@code i} with {@code i mod parallelism == s}; the
 * last {@code late} splits it discovers one at a time while the job runs, as Kafka's enumerator
 * discovers new partitions, and assigns each to its running reader at once.
 */
public final class InterleavingSplitsSource
        implements Source<
                        Long,
                        InterleavingSplitsSource.NumberSplit,
                        InterleavingSplitsSource.Splits>,
                ResultTypeQueryable<Long> {

    /**
     * How often the enumerator discovers the next late split: about once per epoch of a job that
     * checkpoints every second, so that a failure's epoch likely saw a split assigned.
     */
    private static final long DISCOVERY_INTERVAL_MS = 1_100;

    private final long count;
    private final int splits;
    private final int late;

    /** The average batch: a rate of {@code AVERAGE_BATCH / pause} numbers per reader. */
    public static final double AVERAGE_BATCH = 10.5;

    /** The pause of the fetcher after each batch: it sets the source's rate. */
    private final long pauseNanos;

    /**
     * @param count the numbers, 1 to {@code count}
     * @param splits how many splits hold them
     * @param late how many of the splits the enumerator discovers while the job runs
     * @param pauseNanos the fetcher's pause after each batch (10.5 numbers on average)
     */
    public InterleavingSplitsSource(long count, int splits, int late, long pauseNanos) {
        if (count < 1 || splits < 1 || late < 0 || late >= splits || pauseNanos < 0) {
            throw new IllegalArgumentException(
                    "count "
                            + count
                            + ", splits "
                            + splits
                            + ", late "
                            + late
                            + ", pause "
                            + pauseNanos
                            + " ns: count and splits must be positive, late less than splits, the pause not negative");
        }
        this.count = count;
        this.splits = splits;
        this.late = late;
        this.pauseNanos = pauseNanos;
    }

    /** The enumerator's state: splits to assign, and splits not discovered yet. */
    public record Splits(List<NumberSplit> pending, List<NumberSplit> hidden) {}

    /** Split {@code index}, from its {@code next}-th number on. */
    public record NumberSplit(int index, long next) implements SourceSplit {
        @Override
        public String splitId() {
            return "numbers-" + index;
        }

        void writeTo(DataOutputView out) throws IOException {
            out.writeInt(index);
            out.writeLong(next);
        }

        static NumberSplit readFrom(DataInputView in) throws IOException {
            return new NumberSplit(in.readInt(), in.readLong());
        }
    }

    @Override
    public TypeInformation<Long> getProducedType() {
        return Types.LONG;
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.BOUNDED;
    }

    @Override
    public SourceReader<Long, NumberSplit> createReader(SourceReaderContext context) {
        return new Reader(() -> new Fetcher(count, splits, pauseNanos), context);
    }

    @Override
    public SplitEnumerator<NumberSplit, Splits> createEnumerator(
            SplitEnumeratorContext<NumberSplit> context) {
        List<NumberSplit> pending = new ArrayList<>();
        List<NumberSplit> hidden = new ArrayList<>();
        for (int i = 0; i < splits; i++) {
            (i < splits - late ? pending : hidden).add(new NumberSplit(i, 0));
        }
        return new Enumerator(context, new Splits(pending, hidden));
    }

    @Override
    public SplitEnumerator<NumberSplit, Splits> restoreEnumerator(
            SplitEnumeratorContext<NumberSplit> context, Splits checkpoint) {
        return new Enumerator(context, checkpoint);
    }

    @Override
    public SimpleVersionedSerializer<NumberSplit> getSplitSerializer() {
        return new SplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<Splits> getEnumeratorCheckpointSerializer() {
        return new SplitsSerializer();
    }

    /**
     * Assigns each registering reader its pending splits, discovers the hidden ones one by one, and
     * tells a reader there are no more once none is hidden.
     */
    private static final class Enumerator implements SplitEnumerator<NumberSplit, Splits> {
        private final SplitEnumeratorContext<NumberSplit> context;
        private final List<NumberSplit> pending;
        private final List<NumberSplit> hidden;

        Enumerator(SplitEnumeratorContext<NumberSplit> context, Splits splits) {
            this.context = context;
            this.pending = new ArrayList<>(splits.pending());
            this.hidden = new ArrayList<>(splits.hidden());
        }

        @Override
        public void start() {
            if (!hidden.isEmpty()) {
                context.callAsync(
                        () -> null,
                        (ignored, error) -> discover(),
                        DISCOVERY_INTERVAL_MS,
                        DISCOVERY_INTERVAL_MS);
            }
        }

        private void discover() {
            if (hidden.isEmpty()) {
                return;
            }
            pending.add(hidden.remove(0));
            for (int reader : context.registeredReaders().keySet()) {
                assign(reader);
            }
        }

        @Override
        public void handleSplitRequest(int subtaskId, String requesterHostname) {}

        @Override
        public void addSplitsBack(List<NumberSplit> splits, int subtaskId) {
            pending.addAll(splits);
        }

        @Override
        public void addReader(int subtaskId) {
            assign(subtaskId);
        }

        private void assign(int subtaskId) {
            int parallelism = context.currentParallelism();
            List<NumberSplit> assigned = new ArrayList<>();
            pending.removeIf(
                    split -> {
                        if (split.index() % parallelism == subtaskId) {
                            assigned.add(split);
                            return true;
                        }
                        return false;
                    });
            if (!assigned.isEmpty()) {
                context.assignSplits(new SplitsAssignment<>(Map.of(subtaskId, assigned)));
            }
            if (hidden.isEmpty()) {
                context.signalNoMoreSplits(subtaskId);
            }
        }

        @Override
        public Splits snapshotState(long checkpointId) {
            return new Splits(new ArrayList<>(pending), new ArrayList<>(hidden));
        }

        @Override
        public void close() {}
    }

    /** Flink's reader base over one fetcher thread; a split's state is its next position. */
    private static final class Reader
            extends SingleThreadMultiplexSourceReaderBase<long[], Long, NumberSplit, long[]> {

        Reader(Supplier<SplitReader<long[], NumberSplit>> fetcher, SourceReaderContext context) {
            super(
                    fetcher,
                    (element, output, state) -> {
                        output.collect(element[1]);
                        state[1] = element[0] + 1;
                    },
                    new Configuration(),
                    context);
        }

        @Override
        protected void onSplitFinished(Map<String, long[]> finishedSplitIds) {}

        @Override
        protected long[] initializedState(NumberSplit split) {
            return new long[] {split.index(), split.next()};
        }

        @Override
        protected NumberSplit toSplitType(String splitId, long[] state) {
            return new NumberSplit((int) state[0], state[1]);
        }
    }

    /**
     * Polls a random split of its own for a batch of 1 to 20 numbers, as (position, number); a
     * split ends after its last number.
     */
    private static final class Fetcher implements SplitReader<long[], NumberSplit> {
        private final long count;
        private final int splits;
        private final long pauseNanos;

        /** Split id -> (index, next position). */
        private final Map<String, long[]> assigned = new LinkedHashMap<>();

        Fetcher(long count, int splits, long pauseNanos) {
            this.count = count;
            this.splits = splits;
            this.pauseNanos = pauseNanos;
        }

        @Override
        public RecordsWithSplitIds<long[]> fetch() {
            RecordsBySplits.Builder<long[]> batch = new RecordsBySplits.Builder<>();
            if (assigned.isEmpty()) {
                LockSupport.parkNanos(pauseNanos);
                return batch.build();
            }
            ThreadLocalRandom random = ThreadLocalRandom.current();
            List<String> ids = new ArrayList<>(assigned.keySet());
            String id = ids.get(random.nextInt(ids.size()));
            long[] split = assigned.get(id);
            int size = 1 + random.nextInt(20);
            for (int i = 0; i < size; i++) {
                long number = split[0] + 1 + split[1] * splits;
                if (number > count) {
                    batch.addFinishedSplit(id);
                    assigned.remove(id);
                    break;
                }
                batch.add(id, new long[] {split[1], number});
                split[1]++;
            }
            LockSupport.parkNanos(pauseNanos);
            return batch.build();
        }

        @Override
        public void handleSplitsChanges(SplitsChange<NumberSplit> splitsChanges) {
            if (splitsChanges instanceof SplitsAddition) {
                for (NumberSplit split : splitsChanges.splits()) {
                    assigned.put(split.splitId(), new long[] {split.index(), split.next()});
                }
            }
        }

        @Override
        public void wakeUp() {}

        @Override
        public void close() {}
    }

    private static final class SplitSerializer implements SimpleVersionedSerializer<NumberSplit> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(NumberSplit split) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(12);
            split.writeTo(out);
            return out.getCopyOfBuffer();
        }

        @Override
        public NumberSplit deserialize(int version, byte[] serialized) throws IOException {
            return NumberSplit.readFrom(new DataInputDeserializer(serialized));
        }
    }

    private static final class SplitsSerializer implements SimpleVersionedSerializer<Splits> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(Splits splits) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(64);
            for (List<NumberSplit> list : List.of(splits.pending(), splits.hidden())) {
                out.writeInt(list.size());
                for (NumberSplit split : list) {
                    split.writeTo(out);
                }
            }
            return out.getCopyOfBuffer();
        }

        @Override
        public Splits deserialize(int version, byte[] serialized) throws IOException {
            DataInputDeserializer in = new DataInputDeserializer(serialized);
            return new Splits(read(in), read(in));
        }

        private static List<NumberSplit> read(DataInputDeserializer in) throws IOException {
            int size = in.readInt();
            List<NumberSplit> splits = new ArrayList<>(size);
            for (int i = 0; i < size; i++) {
                splits.add(NumberSplit.readFrom(in));
            }
            return splits;
        }
    }
}
