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

package io.clonos.runtime.causal;

import org.apache.flink.annotation.Internal;

import java.util.Arrays;
import java.util.Objects;

/**
 * The outcome of one nondeterministic event of a task, as the causal log keeps it so that a
 * recovered task can reproduce the event exactly. One record type per source of nondeterminism
 * (paper section 4); {@link DeterminantEncoding} gives each a compact binary form.
 */
@Internal
public sealed interface Determinant
        permits Determinant.Order,
                Determinant.Timestamp,
                Determinant.RandomSeed,
                Determinant.ExternalResult,
                Determinant.TimerFired,
                Determinant.SourceCheckpoint,
                Determinant.AsyncCompletion,
                Determinant.BufferBuilt,
                Determinant.Watermark,
                Determinant.WatermarkStatus,
                Determinant.InputWatermarks,
                Determinant.AlignmentCancelled,
                Determinant.SourceSplit,
                Determinant.Overflow {

    /**
     * What the task read next from its input (only with several channels): {@code dataBytes} bytes
     * of data from {@code channel}, or, with {@code dataBytes == 0}, the channel's next event.
     * Bytes rather than buffers, so that the order stays valid when a recovered producer cuts its
     * output into buffers of other sizes: records span buffers freely, and a replay splits or joins
     * buffers to deliver exactly these bytes.
     */
    record Order(int channel, int dataBytes) implements Determinant {
        public Order {
            requireNonNegative(channel, "channel");
            requireNonNegative(dataBytes, "dataBytes");
        }

        public boolean isEvent() {
            return dataBytes == 0;
        }
    }

    /**
     * A determinant that can stand for a run of alike ones in a row, each following from the one
     * before (ticks of the clock in one millisecond, records of one split), so that the log holds
     * the run as one (see {@link TaskCausalLog#appendFresh}).
     */
    interface Run {
        /** How many the run stands for; 1 for a single one. */
        int count();

        /** The {@code index}-th of the run, as a single determinant. */
        Determinant unit(int index);
    }

    /**
     * A wall-clock reading (processing time, ingestion time, the causal time service): the tick of
     * the task's clock at element {@code recordCount} of the epoch. With {@code elements} above 1
     * it is a run: the clock read the same millisecond at that many consecutive elements, each the
     * next one after the previous tick. A busy task ticks hundreds of times per millisecond, so
     * runs, not single ticks, are what its log holds.
     */
    record Timestamp(long recordCount, long millis, int elements) implements Determinant, Run {
        public Timestamp {
            requireNonNegative(recordCount, "recordCount");
            if (elements < 1) {
                throw new IllegalArgumentException("elements must be positive, was " + elements);
            }
        }

        /** One tick at element {@code recordCount}. */
        public Timestamp(long recordCount, long millis) {
            this(recordCount, millis, 1);
        }

        /** A reading at the start of an epoch, before its first element. */
        public Timestamp(long millis) {
            this(0, millis);
        }

        /** The element of the run's last tick. */
        public long lastElement() {
            return recordCount + elements - 1;
        }

        @Override
        public int count() {
            return elements;
        }

        @Override
        public Timestamp unit(int index) {
            return new Timestamp(recordCount + index, millis);
        }
    }

    /** The seed of an epoch's random numbers. */
    record RandomSeed(long seed) implements Determinant {}

    /**
     * The serialized result of an external call or of a user-registered nondeterministic function.
     */
    record ExternalResult(byte[] bytes) implements Determinant {
        public ExternalResult {
            bytes = bytes.clone();
        }

        @Override
        public byte[] bytes() {
            return bytes.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof ExternalResult && Arrays.equals(bytes, ((ExternalResult) o).bytes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }

        @Override
        public String toString() {
            return "ExternalResult[" + bytes.length + " bytes]";
        }
    }

    /** A timer (or another mailbox action) ran after {@code recordCount} records of the epoch. */
    record TimerFired(long recordCount, int timerId, long timestamp) implements Determinant {
        public TimerFired {
            requireNonNegative(recordCount, "recordCount");
            requireNonNegative(timerId, "timerId");
        }
    }

    /**
     * A source took checkpoint {@code checkpointId} after {@code recordCount} records of the epoch.
     */
    record SourceCheckpoint(long recordCount, long checkpointId, long timestamp)
            implements Determinant {
        public SourceCheckpoint {
            requireNonNegative(recordCount, "recordCount");
            requireNonNegative(checkpointId, "checkpointId");
        }
    }

    /**
     * An asynchronous call's result took effect after {@code recordCount} records of the epoch:
     * entry {@code entry} of the task's async operator {@code callbackId} completed. The result
     * itself follows as an {@link ExternalResult}.
     */
    record AsyncCompletion(long recordCount, int callbackId, long entry) implements Determinant {
        public AsyncCompletion {
            requireNonNegative(recordCount, "recordCount");
            requireNonNegative(callbackId, "callbackId");
            requireNonNegative(entry, "entry");
        }
    }

    /** An output buffer of {@code size} bytes was cut and sent on a subpartition. */
    record BufferBuilt(int size) implements Determinant {
        public BufferBuilt {
            requireNonNegative(size, "size");
        }
    }

    /**
     * Input {@code input} of the task handed its operators watermark {@code timestamp} after {@code
     * recordCount} elements of the epoch. Which watermarks a task's inputs pass on depends on what
     * they saw before the restored checkpoint (Flink keeps neither a watermark generator's nor a
     * watermark valve's state in checkpoints), so a recovered task hands on the logged ones.
     */
    record Watermark(long recordCount, int input, long timestamp) implements Determinant {
        public Watermark {
            requireNonNegative(recordCount, "recordCount");
            requireNonNegative(input, "input");
        }
    }

    /** Input {@code input} handed its operators a watermark status (idle or active) here. */
    record WatermarkStatus(long recordCount, int input, boolean idle) implements Determinant {
        public WatermarkStatus {
            requireNonNegative(recordCount, "recordCount");
            requireNonNegative(input, "input");
        }
    }

    /**
     * The last watermark and status each input of a task with several inputs had handed its
     * operators when the epoch began: an operator combines them, and a recovered one starts from
     * these rather than from nothing.
     */
    record InputWatermarks(long[] watermarks, boolean[] idle) implements Determinant {
        public InputWatermarks {
            if (watermarks.length != idle.length) {
                throw new IllegalArgumentException(
                        watermarks.length + " watermarks but " + idle.length + " statuses");
            }
            watermarks = watermarks.clone();
            idle = idle.clone();
        }

        @Override
        public long[] watermarks() {
            return watermarks.clone();
        }

        @Override
        public boolean[] idle() {
            return idle.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof InputWatermarks other
                    && Arrays.equals(watermarks, other.watermarks)
                    && Arrays.equals(idle, other.idle);
        }

        @Override
        public int hashCode() {
            return 31 * Arrays.hashCode(watermarks) + Arrays.hashCode(idle);
        }

        @Override
        public String toString() {
            return "InputWatermarks" + Arrays.toString(watermarks) + Arrays.toString(idle);
        }
    }

    /**
     * The task's alignment of checkpoint {@code checkpointId} was cancelled here because the
     * producer of {@code channel} was lost after sending its barrier (its successor's data would
     * overtake the barrier). When it happened depends on the failure, not on the input: a recovered
     * task cancels the alignment at the same point, or it would stay blocked on the channels whose
     * barriers it already read, waiting for data its predecessor read after the cancellation.
     */
    record AlignmentCancelled(int channel, long checkpointId) implements Determinant {
        public AlignmentCancelled {
            requireNonNegative(channel, "channel");
            requireNonNegative(checkpointId, "checkpointId");
        }
    }

    /**
     * A source's reader emitted its next record from split {@code splitId}. A reader with several
     * splits (a Kafka partition each) takes them from fetcher threads in an order that thread
     * scheduling and network timing decide; a split's own records, read from its restored position,
     * are the same every time. Logged before the record is emitted, so a consumer that holds the
     * record holds its split too. The encoding names a split by its place in the epoch's table of
     * splits and a run of records from one split by its length.
     *
     * <p>{@code input} is the task's input the source is: 0 in a source task; in a task with
     * sources chained to an operator of several inputs, the source's input of that operator, whose
     * records interleave with the network inputs' buffers as the task happens to choose, so that
     * every record of such a source is logged, one of its reader's main output under {@link
     * #MAIN_OUTPUT}.
     */
    record SourceSplit(int input, String splitId, int records) implements Determinant, Run {
        /** The split id of a record a reader emitted through its main output, not a split's. */
        public static final String MAIN_OUTPUT = "";

        public SourceSplit {
            requireNonNegative(input, "input");
            Objects.requireNonNull(splitId, "splitId");
            if (records < 1) {
                throw new IllegalArgumentException("records must be positive, was " + records);
            }
        }

        /** One record of split {@code splitId} of input {@code input}. */
        public SourceSplit(int input, String splitId) {
            this(input, splitId, 1);
        }

        /** A record of a source task's only input. */
        public SourceSplit(String splitId) {
            this(0, splitId);
        }

        @Override
        public int count() {
            return records;
        }

        @Override
        public SourceSplit unit(int index) {
            return records == 1 ? this : new SourceSplit(input, splitId);
        }
    }

    /**
     * The log's memory ({@code clonos.determinant.memory}) ran out here: what follows in the epoch
     * is missing, and a task cannot be recovered by determinants from this epoch.
     */
    record Overflow() implements Determinant {}

    private static void requireNonNegative(long value, String name) {
        if (value < 0) {
            throw new IllegalArgumentException(name + " must not be negative, was " + value);
        }
    }
}
