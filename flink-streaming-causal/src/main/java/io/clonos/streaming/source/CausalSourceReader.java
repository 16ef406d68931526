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

package io.clonos.streaming.source;

import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.Determinant;
import io.clonos.runtime.causal.LocalRecoveryImpossibleException;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.core.io.InputStatus;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A FLIP-27 reader under causal logging. A reader with several splits (Kafka's, with several
 * partitions per subtask) interleaves them as its fetcher threads happen to deliver; each split's
 * own records, read from the position the checkpoint restored, are the same every time. So the
 * split of every record the reader emits through a split's output is a determinant ({@link
 * Determinant.SourceSplit}, logged before the record leaves the reader), and a recovered reader
 * emits its splits' records in its predecessor's order, holding back what its fetchers deliver
 * ahead of its turn.
 *
 * <p>Held records advance the reader's split positions ahead of what the task emitted, so they
 * never outlive the replay into a checkpoint: once the replay ends they are emitted (and logged)
 * before anything new, and a checkpoint emits what is left first ({@link #emitHeld}). Records a
 * reader emits through its main output rather than a split's (readers without fetcher threads,
 * which emit their splits one after the other) are in the reader's own order and pass unlogged,
 * except in a task where the source is chained to an operator of several inputs: there every record
 * says which input it came from, so that a recovered task reads its inputs in its predecessor's
 * order ({@link Determinant.SourceSplit#input}).
 *
 * <p>A split the reader is given again while it still reads it is dropped. Flink's Kafka enumerator
 * (connector 3.4.0) assigns the same partitions again when partition discoveries pile up (a
 * discovery finds the previous one's partitions neither assigned nor pending while their offsets
 * are still being looked up), and the reader would then seek those partitions back to their
 * starting offset: duplicates on any Flink, and on Clonos a reader whose predecessor re-read
 * records at a moment no determinant records.
 */
@Internal
public final class CausalSourceReader<T, SplitT extends SourceSplit>
        implements SourceReader<T, SplitT> {

    private static final Logger LOG = LoggerFactory.getLogger(CausalSourceReader.class);

    private final SourceReader<T, SplitT> reader;
    private final CausalTask task;
    private final TypeSerializer<T> serializer;
    private final HeldRecords<T> held = new HeldRecords<>();

    /** The task's input the source is (0 in a source task). */
    private final int input;

    /** Whether the records of the reader's main output are logged too (a chained source's). */
    private final boolean logsMainOutput;

    /** The operator's output, wrapped, once the operator handed it to the reader. */
    private OrderedOutput output;

    /** The splits the reader reads: given to it, and not released as finished (task thread). */
    private final Set<String> assigned = new HashSet<>();

    /** Whether the reader runs for the replay: what it emits through split outputs is held. */
    private boolean holding;

    /** The reader of a source task. */
    public CausalSourceReader(
            SourceReader<T, SplitT> reader, CausalTask task, TypeSerializer<T> serializer) {
        this(reader, task, serializer, 0, false);
    }

    /**
     * The reader of a source that is input {@code input} of its task; {@code chained} if the source
     * is chained to an operator of several inputs.
     */
    public CausalSourceReader(
            SourceReader<T, SplitT> reader,
            CausalTask task,
            TypeSerializer<T> serializer,
            int input,
            boolean chained) {
        this.reader = reader;
        this.task = task;
        this.serializer = serializer;
        this.input = input;
        this.logsMainOutput = chained;
    }

    /**
     * Whether the replay's next element is a record of this source; the reader holds what its
     * fetchers deliver ahead of that.
     */
    public boolean isDue() {
        Determinant.SourceSplit due = task.recovery().peek(Determinant.SourceSplit.class);
        return due != null && due.input() == input;
    }

    /** The replay's next record if it is this source's, else null. */
    @Nullable
    private Determinant.SourceSplit due() {
        Determinant.SourceSplit due = task.recovery().peek(Determinant.SourceSplit.class);
        return due != null && due.input() == input ? due : null;
    }

    @Override
    public InputStatus pollNext(ReaderOutput<T> operatorOutput) throws Exception {
        OrderedOutput out = outputFor(operatorOutput);
        if (task.recovery().isReplaying()) {
            // what the predecessor did before its next record comes first
            task.fireDueTimers();
            if (task.recovery().isReplaying()) {
                return replayNext(out);
            }
        }
        if (!held.isEmpty()) {
            emitFirstHeld(out);
            return InputStatus.MORE_AVAILABLE;
        }
        return reader.pollNext(out);
    }

    /**
     * Emits the predecessor's next record if the reader delivered it; otherwise lets the reader
     * deliver more, holding what it emits through its splits' outputs.
     */
    private InputStatus replayNext(OrderedOutput out) throws Exception {
        Determinant.SourceSplit due = due();
        if (due != null && held.has(due.splitId())) {
            task.decide(Determinant.SourceSplit.class, () -> due);
            out.splitOutput(due.splitId()).forward(held.take(due.splitId()));
            return InputStatus.MORE_AVAILABLE;
        }
        InputStatus status;
        holding = true;
        try {
            status = reader.pollNext(out);
        } finally {
            holding = false;
        }
        if (status != InputStatus.END_OF_INPUT) {
            return status;
        }
        if (due != null && !held.has(due.splitId())) {
            throw new LocalRecoveryImpossibleException(
                    "The recovered reader ended where its predecessor emitted a record of split "
                            + due.splitId()
                            + " ("
                            + task.recovery().position()
                            + ")");
        }
        // the reader ended; what it holds goes out before the end
        return held.isEmpty() ? status : InputStatus.MORE_AVAILABLE;
    }

    /**
     * Emits, in the order they were held, the records a replay held that the task did not emit yet
     * (task thread, before a checkpoint): the reader's positions then match what left the task.
     */
    public void emitHeld() throws Exception {
        if (task.recovery().isReplaying()) {
            return;
        }
        while (!held.isEmpty()) {
            emitFirstHeld(output);
        }
    }

    /** Emits, and logs, the oldest held record; the replay is over. */
    private void emitFirstHeld(OrderedOutput out) {
        String split = held.firstSplit();
        out.splitOutput(split).emit(held.take(split));
    }

    @Override
    public CompletableFuture<Void> isAvailable() {
        if (task.recovery().isReplaying()) {
            Determinant.SourceSplit due = due();
            if (due != null && held.has(due.splitId())) {
                return CompletableFuture.completedFuture(null);
            }
        } else if (!held.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return reader.isAvailable();
    }

    @Override
    public List<SplitT> snapshotState(long checkpointId) {
        if (!held.isEmpty()) {
            throw new IllegalStateException(
                    "Checkpoint "
                            + checkpointId
                            + " of a reader that holds "
                            + held.size()
                            + " records it took ahead of the replay: its splits' positions are past what the task emitted");
        }
        return reader.snapshotState(checkpointId);
    }

    private OrderedOutput outputFor(ReaderOutput<T> operatorOutput) {
        if (output == null || output.operator != operatorOutput) {
            output = new OrderedOutput(operatorOutput);
        }
        return output;
    }

    @Override
    public void start() {
        reader.start();
    }

    @Override
    public void addSplits(List<SplitT> splits) {
        List<SplitT> added = new ArrayList<>(splits.size());
        for (SplitT split : splits) {
            if (assigned.add(split.splitId())) {
                added.add(split);
            } else {
                LOG.warn(
                        "The reader was given split {} again while it reads it; the repeat is dropped, as reading it would go back to the split's starting position.",
                        split.splitId());
            }
        }
        if (!added.isEmpty()) {
            reader.addSplits(added);
        }
    }

    @Override
    public void notifyNoMoreSplits() {
        reader.notifyNoMoreSplits();
    }

    @Override
    public void handleSourceEvents(SourceEvent sourceEvent) {
        reader.handleSourceEvents(sourceEvent);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        reader.notifyCheckpointComplete(checkpointId);
    }

    @Override
    public void notifyCheckpointAborted(long checkpointId) throws Exception {
        reader.notifyCheckpointAborted(checkpointId);
    }

    @Override
    public void pauseOrResumeSplits(
            Collection<String> splitsToPause, Collection<String> splitsToResume) {
        reader.pauseOrResumeSplits(splitsToPause, splitsToResume);
    }

    @Override
    public void close() throws Exception {
        reader.close();
    }

    /**
     * The operator's output as the reader sees it: the main output passes through, each split's
     * output logs (or, for a replay, holds) what the reader emits through it.
     */
    private final class OrderedOutput implements ReaderOutput<T> {
        private final ReaderOutput<T> operator;
        private final Map<String, SplitOutput> splits = new HashMap<>();

        /** Splits the reader released while records of theirs were still held. */
        private final Set<String> released = new HashSet<>();

        OrderedOutput(ReaderOutput<T> operator) {
            this.operator = operator;
        }

        @Override
        public void collect(T record) {
            if (logsMainOutput) {
                splitOutput(Determinant.SourceSplit.MAIN_OUTPUT).collect(record);
            } else {
                operator.collect(record);
            }
        }

        @Override
        public void collect(T record, long timestamp) {
            if (logsMainOutput) {
                splitOutput(Determinant.SourceSplit.MAIN_OUTPUT).collect(record, timestamp);
            } else {
                operator.collect(record, timestamp);
            }
        }

        @Override
        public void emitWatermark(Watermark watermark) {
            operator.emitWatermark(watermark);
        }

        @Override
        public void markIdle() {
            operator.markIdle();
        }

        @Override
        public void markActive() {
            operator.markActive();
        }

        @Override
        public SourceOutput<T> createOutputForSplit(String splitId) {
            return splitOutput(splitId);
        }

        SplitOutput splitOutput(String splitId) {
            return splits.computeIfAbsent(
                    splitId,
                    id ->
                            new SplitOutput(
                                    id,
                                    logsMainOutput && id.equals(Determinant.SourceSplit.MAIN_OUTPUT)
                                            ? operator
                                            : operator.createOutputForSplit(id)));
        }

        @Override
        public void releaseOutputForSplit(String splitId) {
            // the reader finished the split: it may be given a split of that id again
            assigned.remove(splitId);
            if (held.has(splitId)) {
                released.add(splitId);
                return;
            }
            splits.remove(splitId);
            operator.releaseOutputForSplit(splitId);
        }

        /** The last held record of a released split left: its output goes now. */
        void emptied(String splitId) {
            if (released.remove(splitId)) {
                releaseOutputForSplit(splitId);
            }
        }
    }

    /** One split's output: logs each record's split before the operator sees the record. */
    private final class SplitOutput implements SourceOutput<T> {
        private final String splitId;
        private final SourceOutput<T> operator;
        private final Determinant.SourceSplit determinant;

        SplitOutput(String splitId, SourceOutput<T> operator) {
            this.splitId = splitId;
            this.operator = operator;
            this.determinant = new Determinant.SourceSplit(input, splitId);
        }

        @Override
        public void collect(T record) {
            if (holding) {
                held.add(splitId, serializer.copy(record), Long.MIN_VALUE, false);
            } else {
                task.logged(determinant);
                operator.collect(record);
            }
        }

        @Override
        public void collect(T record, long timestamp) {
            if (holding) {
                held.add(splitId, serializer.copy(record), timestamp, true);
            } else {
                task.logged(determinant);
                operator.collect(record, timestamp);
            }
        }

        /** A held record, now in the task's order: logged and emitted. */
        void emit(HeldRecords.Held<T> record) {
            task.logged(determinant);
            forward(record);
        }

        /** A held record whose determinant the replay already took. */
        void forward(HeldRecords.Held<T> record) {
            if (record.hasTimestamp()) {
                operator.collect(record.record(), record.timestamp());
            } else {
                operator.collect(record.record());
            }
            if (!held.has(splitId)) {
                output.emptied(splitId);
            }
        }

        @Override
        public void emitWatermark(Watermark watermark) {
            operator.emitWatermark(watermark);
        }

        @Override
        public void markIdle() {
            operator.markIdle();
        }

        @Override
        public void markActive() {
            operator.markActive();
        }
    }
}
