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

import javax.annotation.Nullable;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The binary form of determinants: a one-byte tag, then the fields as variable-length integers
 * (LEB128; signed values zig-zag encoded), byte arrays as a length and the bytes. Channel indexes,
 * sizes and counts have no fixed width, so there is no limit on channels or subpartitions, and the
 * common small values take one byte.
 *
 * <p>An epoch's determinants form one stream, encoded and decoded from its start: a {@link
 * Determinant.Timestamp} (a tick of the task's clock) is the difference in elements and in
 * milliseconds to the previous tick of the epoch (the first to 0 and 0). The common tick, at the
 * next element, takes two bytes, one when the millisecond is the same; a run of such ticks in one
 * millisecond takes a tag and its length.
 *
 * <p>Decoding never guesses: unknown tags, truncated fields and overlong integers raise {@link
 * CorruptCausalLogException}. Integrity of whole deltas is the job of {@link CausalLogDelta}'s
 * checksum.
 */
@Internal
public final class DeterminantEncoding {

    static final byte ORDER = 1;
    static final byte TIMESTAMP = 2;
    static final byte RANDOM_SEED = 3;
    static final byte EXTERNAL_RESULT = 4;
    static final byte TIMER_FIRED = 5;
    static final byte SOURCE_CHECKPOINT = 6;
    static final byte ASYNC_COMPLETION = 7;
    static final byte BUFFER_BUILT = 8;

    /** A tick at the element after the previous tick's: the difference in milliseconds only. */
    static final byte TICK_NEXT = 9;

    /** A tick at the element after the previous tick's, in the same millisecond: the tag alone. */
    static final byte TICK_NEXT_SAME_MILLIS = 10;

    static final byte OVERFLOW = 11;
    static final byte WATERMARK = 12;
    static final byte WATERMARK_STATUS = 13;
    static final byte INPUT_WATERMARKS = 14;
    static final byte ALIGNMENT_CANCELLED = 15;

    /** A record from a split by its index in the epoch's table; a new split's id follows. */
    static final byte SOURCE_SPLIT = 16;

    /** A record from the same split as the previous record: the tag alone. */
    static final byte SOURCE_SPLIT_SAME = 17;

    /**
     * A run of ticks, each at the element after the previous tick's and in its millisecond: the tag
     * and the run's length (at least 2).
     */
    static final byte TICK_RUN = 18;

    /** A run of records from the previous record's split: the tag and its length (at least 2). */
    static final byte SOURCE_SPLIT_RUN = 19;

    /**
     * The kinds of determinants as metrics and benchmarks name them: every tick and run of the
     * task's clock is {@code clock}, every split record {@code source-split}.
     */
    public static final List<String> KINDS =
            List.of(
                    "order",
                    "clock",
                    "random-seed",
                    "external-result",
                    "timer",
                    "source-checkpoint",
                    "async-completion",
                    "buffer-built",
                    "overflow",
                    "watermark",
                    "alignment-cancelled",
                    "source-split");

    private DeterminantEncoding() {}

    /** The index in {@link #KINDS} of the determinant an encoded one starts with {@code tag}. */
    static int kindOf(byte tag) {
        switch (tag) {
            case ORDER:
                return 0;
            case TIMESTAMP:
            case TICK_NEXT:
            case TICK_NEXT_SAME_MILLIS:
            case TICK_RUN:
                return 1;
            case RANDOM_SEED:
                return 2;
            case EXTERNAL_RESULT:
                return 3;
            case TIMER_FIRED:
                return 4;
            case SOURCE_CHECKPOINT:
                return 5;
            case ASYNC_COMPLETION:
                return 6;
            case BUFFER_BUILT:
                return 7;
            case OVERFLOW:
                return 8;
            case WATERMARK:
            case WATERMARK_STATUS:
            case INPUT_WATERMARKS:
                return 9;
            case ALIGNMENT_CANCELLED:
                return 10;
            case SOURCE_SPLIT:
            case SOURCE_SPLIT_SAME:
            case SOURCE_SPLIT_RUN:
                return 11;
            default:
                throw new IllegalArgumentException("Unknown determinant tag " + tag);
        }
    }

    /** The marker of a log whose memory ran out; it depends on no encoder state. */
    static byte[] overflowMarker() {
        return new byte[] {OVERFLOW};
    }

    /** Encodes one epoch's determinants, from the epoch's start. */
    public static byte[] encode(List<Determinant> determinants) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Encoder encoder = new Encoder();
        for (Determinant determinant : determinants) {
            encoder.encode(determinant, out);
        }
        return out.toByteArray();
    }

    /** The encoder of one epoch's stream of determinants; a new epoch takes a new encoder. */
    public static final class Encoder {
        private long lastMillis;
        private long lastTickElement;
        private final SplitTable splits = new SplitTable();

        public void encode(Determinant determinant, ByteArrayOutputStream out) {
            if (determinant instanceof Determinant.Order d) {
                out.write(ORDER);
                VarInts.writeUnsigned(out, d.channel());
                VarInts.writeUnsigned(out, d.dataBytes());
            } else if (determinant instanceof Determinant.Timestamp d) {
                long elements = d.recordCount() - lastTickElement;
                long millis = d.millis() - lastMillis;
                if (d.elements() > 1) {
                    if (!extendsRun(d.recordCount(), d.millis())) {
                        throw new IllegalArgumentException(
                                d + " does not continue the previous tick, so it is no run");
                    }
                    writeRun(false, d.elements(), out);
                } else if (elements == 1 && millis == 0) {
                    out.write(TICK_NEXT_SAME_MILLIS);
                } else if (elements == 1) {
                    out.write(TICK_NEXT);
                    VarInts.writeSigned(out, millis);
                } else {
                    out.write(TIMESTAMP);
                    VarInts.writeSigned(out, elements);
                    VarInts.writeSigned(out, millis);
                }
                lastMillis = d.millis();
                lastTickElement = d.lastElement();
            } else if (determinant instanceof Determinant.RandomSeed d) {
                out.write(RANDOM_SEED);
                VarInts.writeSigned(out, d.seed());
            } else if (determinant instanceof Determinant.ExternalResult d) {
                out.write(EXTERNAL_RESULT);
                byte[] bytes = d.bytes();
                VarInts.writeUnsigned(out, bytes.length);
                out.write(bytes, 0, bytes.length);
            } else if (determinant instanceof Determinant.TimerFired d) {
                out.write(TIMER_FIRED);
                VarInts.writeUnsigned(out, d.recordCount());
                VarInts.writeUnsigned(out, d.timerId());
                VarInts.writeSigned(out, d.timestamp());
            } else if (determinant instanceof Determinant.SourceCheckpoint d) {
                out.write(SOURCE_CHECKPOINT);
                VarInts.writeUnsigned(out, d.recordCount());
                VarInts.writeUnsigned(out, d.checkpointId());
                VarInts.writeSigned(out, d.timestamp());
            } else if (determinant instanceof Determinant.AsyncCompletion d) {
                out.write(ASYNC_COMPLETION);
                VarInts.writeUnsigned(out, d.recordCount());
                VarInts.writeUnsigned(out, d.callbackId());
                VarInts.writeUnsigned(out, d.entry());
            } else if (determinant instanceof Determinant.BufferBuilt d) {
                out.write(BUFFER_BUILT);
                VarInts.writeUnsigned(out, d.size());
            } else if (determinant instanceof Determinant.Watermark d) {
                out.write(WATERMARK);
                VarInts.writeUnsigned(out, d.recordCount());
                VarInts.writeUnsigned(out, d.input());
                VarInts.writeSigned(out, d.timestamp());
            } else if (determinant instanceof Determinant.WatermarkStatus d) {
                out.write(WATERMARK_STATUS);
                VarInts.writeUnsigned(out, d.recordCount());
                VarInts.writeUnsigned(out, d.input());
                out.write(d.idle() ? 1 : 0);
            } else if (determinant instanceof Determinant.InputWatermarks d) {
                out.write(INPUT_WATERMARKS);
                long[] watermarks = d.watermarks();
                boolean[] idle = d.idle();
                VarInts.writeUnsigned(out, watermarks.length);
                for (int i = 0; i < watermarks.length; i++) {
                    VarInts.writeSigned(out, watermarks[i]);
                    out.write(idle[i] ? 1 : 0);
                }
            } else if (determinant instanceof Determinant.AlignmentCancelled d) {
                out.write(ALIGNMENT_CANCELLED);
                VarInts.writeUnsigned(out, d.channel());
                VarInts.writeUnsigned(out, d.checkpointId());
            } else if (determinant instanceof Determinant.SourceSplit d) {
                splits.encode(d, out);
            } else if (determinant instanceof Determinant.Overflow) {
                out.write(OVERFLOW);
            } else {
                throw new IllegalArgumentException("Unknown determinant " + determinant);
            }
        }

        /**
         * Whether {@code determinant} extends a run of its kind: a single tick at the element after
         * the previous tick's, in the same millisecond, or a single record of the previous record's
         * split. Such a determinant is taken ({@link #takeIntoRun}) rather than written; the log
         * writes the run once it ends ({@link #writeRun}).
         */
        public boolean extendsRun(Determinant determinant) {
            if (determinant instanceof Determinant.Timestamp tick) {
                return tick.elements() == 1 && extendsRun(tick.recordCount(), tick.millis());
            }
            return determinant instanceof Determinant.SourceSplit split && splits.isLast(split);
        }

        private boolean extendsRun(long element, long millis) {
            return element == lastTickElement + 1 && millis == lastMillis;
        }

        /**
         * Takes a determinant that {@link #extendsRun extends a run} into it, without writing it.
         */
        public void takeIntoRun(Determinant determinant) {
            if (determinant instanceof Determinant.Timestamp tick) {
                lastTickElement = tick.recordCount();
            }
        }
    }

    /**
     * Writes a run of {@code count} ticks ({@code ofSplits} false) or split records that extended
     * the one before one by one.
     */
    static void writeRun(boolean ofSplits, int count, ByteArrayOutputStream out) {
        if (count == 1) {
            out.write(ofSplits ? SOURCE_SPLIT_SAME : TICK_NEXT_SAME_MILLIS);
        } else {
            out.write(ofSplits ? SOURCE_SPLIT_RUN : TICK_RUN);
            VarInts.writeUnsigned(out, count);
        }
    }

    /** Decodes one epoch's determinants, from the epoch's start. */
    public static List<Determinant> decode(byte[] bytes) throws CorruptCausalLogException {
        VarInts.Reader in = new VarInts.Reader(bytes, 0, bytes.length);
        List<Determinant> determinants = new ArrayList<>();
        Determinant.Timestamp lastTick = new Determinant.Timestamp(0, 0);
        SplitTable splits = new SplitTable();
        while (in.hasMore()) {
            Determinant next = decodeOne(in, lastTick, splits);
            if (next instanceof Determinant.Timestamp t) {
                lastTick = t;
            }
            determinants.add(next);
        }
        return determinants;
    }

    private static Determinant decodeOne(
            VarInts.Reader in, Determinant.Timestamp lastTick, SplitTable splits)
            throws CorruptCausalLogException {
        int position = in.position();
        byte tag = in.readByte();
        switch (tag) {
            case ORDER:
                return new Determinant.Order(in.readUnsignedInt(), in.readUnsignedInt());
            case TIMESTAMP:
                return tick(lastTick, in.readSigned(), in.readSigned(), position);
            case TICK_NEXT:
                return tick(lastTick, 1, in.readSigned(), position);
            case TICK_NEXT_SAME_MILLIS:
                return tick(lastTick, 1, 0, position);
            case TICK_RUN:
                {
                    int ticks = runLength(in, "ticks", position);
                    Determinant.Timestamp first = tick(lastTick, 1, 0, position);
                    return new Determinant.Timestamp(first.recordCount(), first.millis(), ticks);
                }
            case RANDOM_SEED:
                return new Determinant.RandomSeed(in.readSigned());
            case EXTERNAL_RESULT:
                return new Determinant.ExternalResult(in.readBytes(in.readUnsignedInt()));
            case TIMER_FIRED:
                return new Determinant.TimerFired(
                        in.readUnsigned(), in.readUnsignedInt(), in.readSigned());
            case SOURCE_CHECKPOINT:
                return new Determinant.SourceCheckpoint(
                        in.readUnsigned(), in.readUnsigned(), in.readSigned());
            case ASYNC_COMPLETION:
                return new Determinant.AsyncCompletion(
                        in.readUnsigned(), in.readUnsignedInt(), in.readUnsigned());
            case BUFFER_BUILT:
                return new Determinant.BufferBuilt(in.readUnsignedInt());
            case OVERFLOW:
                return new Determinant.Overflow();
            case WATERMARK:
                return new Determinant.Watermark(
                        in.readUnsigned(), in.readUnsignedInt(), in.readSigned());
            case WATERMARK_STATUS:
                return new Determinant.WatermarkStatus(
                        in.readUnsigned(), in.readUnsignedInt(), readFlag(in, position));
            case INPUT_WATERMARKS:
                {
                    int inputs = in.readUnsignedInt();
                    if (inputs > in.remaining()) {
                        throw new CorruptCausalLogException(
                                "Input watermarks of "
                                        + inputs
                                        + " inputs at byte "
                                        + position
                                        + " exceed the log");
                    }
                    long[] watermarks = new long[inputs];
                    boolean[] idle = new boolean[inputs];
                    for (int i = 0; i < inputs; i++) {
                        watermarks[i] = in.readSigned();
                        idle[i] = readFlag(in, position);
                    }
                    return new Determinant.InputWatermarks(watermarks, idle);
                }
            case ALIGNMENT_CANCELLED:
                return new Determinant.AlignmentCancelled(in.readUnsignedInt(), in.readUnsigned());
            case SOURCE_SPLIT:
                return splits.decode(in, position);
            case SOURCE_SPLIT_SAME:
                return splits.decodeSame(position);
            case SOURCE_SPLIT_RUN:
                {
                    int records = runLength(in, "split records", position);
                    Determinant.SourceSplit split = splits.decodeSame(position);
                    return new Determinant.SourceSplit(split.input(), split.splitId(), records);
                }
            default:
                throw new CorruptCausalLogException(
                        "Unknown determinant tag " + tag + " at byte " + position);
        }
    }

    /** The length of a run (at least 2; one is written as a single determinant). */
    private static int runLength(VarInts.Reader in, String of, int position)
            throws CorruptCausalLogException {
        int length = in.readUnsignedInt();
        if (length < 2) {
            throw new CorruptCausalLogException(
                    "A run of " + length + " " + of + " at byte " + position);
        }
        return length;
    }

    private static boolean readFlag(VarInts.Reader in, int position)
            throws CorruptCausalLogException {
        byte flag = in.readByte();
        if (flag != 0 && flag != 1) {
            throw new CorruptCausalLogException("A flag of " + flag + " at byte " + position);
        }
        return flag == 1;
    }

    private static Determinant.Timestamp tick(
            Determinant.Timestamp last, long elements, long millis, int position)
            throws CorruptCausalLogException {
        long element = last.lastElement() + elements;
        if (element < 0) {
            throw new CorruptCausalLogException(
                    "A tick at a negative element (" + element + ") at byte " + position);
        }
        return new Determinant.Timestamp(element, last.millis() + millis);
    }

    /**
     * The splits an epoch's records came from, in the order of their first record (with the input
     * they came through): a record names its split by index, and a run of records from one split
     * takes its tag and length.
     */
    private static final class SplitTable {
        private final List<Determinant.SourceSplit> splits = new ArrayList<>();
        private final Map<Determinant.SourceSplit, Integer> indexes = new HashMap<>();
        @Nullable private Determinant.SourceSplit last;

        /** Whether {@code split} is one record of the previous record's split. */
        boolean isLast(Determinant.SourceSplit split) {
            return split.records() == 1 && split.equals(last);
        }

        void encode(Determinant.SourceSplit run, ByteArrayOutputStream out) {
            Determinant.SourceSplit split = run.unit(0);
            if (run.records() > 1) {
                if (!split.equals(last)) {
                    throw new IllegalArgumentException(
                            run
                                    + " does not continue the previous record's split, so it is no run");
                }
                writeRun(true, run.records(), out);
                return;
            }
            if (split.equals(last)) {
                out.write(SOURCE_SPLIT_SAME);
                return;
            }
            out.write(SOURCE_SPLIT);
            Integer index = indexes.get(split);
            if (index != null) {
                VarInts.writeUnsigned(out, index);
                last = splits.get(index);
                return;
            }
            VarInts.writeUnsigned(out, splits.size());
            VarInts.writeUnsigned(out, split.input());
            byte[] id = split.splitId().getBytes(StandardCharsets.UTF_8);
            VarInts.writeUnsigned(out, id.length);
            out.write(id, 0, id.length);
            last = split;
            indexes.put(split, splits.size());
            splits.add(last);
        }

        Determinant.SourceSplit decode(VarInts.Reader in, int position)
                throws CorruptCausalLogException {
            int index = in.readUnsignedInt();
            if (index < splits.size()) {
                last = splits.get(index);
            } else if (index == splits.size()) {
                int input = in.readUnsignedInt();
                int length = in.readUnsignedInt();
                if (length > in.remaining()) {
                    throw new CorruptCausalLogException(
                            "A split id of "
                                    + length
                                    + " bytes at byte "
                                    + position
                                    + " exceeds the log");
                }
                last =
                        new Determinant.SourceSplit(
                                input, new String(in.readBytes(length), StandardCharsets.UTF_8));
                splits.add(last);
            } else {
                throw new CorruptCausalLogException(
                        "Split "
                                + index
                                + " at byte "
                                + position
                                + " where the epoch named "
                                + splits.size()
                                + " splits");
            }
            return last;
        }

        Determinant.SourceSplit decodeSame(int position) throws CorruptCausalLogException {
            if (last == null) {
                throw new CorruptCausalLogException(
                        "A record of the previous split at byte "
                                + position
                                + " where the epoch named no split");
            }
            return last;
        }
    }
}
