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

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Property checks of the determinant encoding and the causal log deltas over many random inputs
 * from fixed seeds (so that a failure reproduces), and a fuzz check that corrupt bytes are rejected
 * rather than read as something else.
 */
class CausalLogFormatTest {

    private static final CausalLogId LOG = new CausalLogId("window-1", 3, CausalLogId.MAIN);

    static Determinant randomDeterminant(Random random) {
        switch (random.nextInt(13)) {
            case 0:
                return new Determinant.Order(
                        random.nextBoolean()
                                ? random.nextInt(4)
                                : random.nextInt(Integer.MAX_VALUE),
                        random.nextBoolean() ? 0 : random.nextInt(Integer.MAX_VALUE));
            case 1:
                return new Determinant.Timestamp(random.nextInt(1 << 20), random.nextLong());
            case 2:
                return new Determinant.RandomSeed(random.nextLong());
            case 3:
                byte[] bytes = new byte[random.nextInt(64)];
                random.nextBytes(bytes);
                return new Determinant.ExternalResult(bytes);
            case 4:
                return new Determinant.TimerFired(
                        random.nextLong() & Long.MAX_VALUE,
                        random.nextInt(1000),
                        random.nextLong());
            case 5:
                return new Determinant.SourceCheckpoint(
                        random.nextInt(100_000),
                        random.nextInt(10_000),
                        System.currentTimeMillis());
            case 6:
                return new Determinant.AsyncCompletion(
                        random.nextInt(Integer.MAX_VALUE),
                        random.nextInt(16),
                        random.nextLong() >>> 1);
            case 7:
                return new Determinant.Watermark(
                        random.nextInt(100_000),
                        random.nextInt(3),
                        random.nextBoolean() ? random.nextLong() : Long.MAX_VALUE);
            case 8:
                return new Determinant.WatermarkStatus(
                        random.nextInt(100_000), random.nextInt(3), random.nextBoolean());
            case 9:
                {
                    int inputs = 1 + random.nextInt(3);
                    long[] watermarks = new long[inputs];
                    boolean[] idle = new boolean[inputs];
                    for (int i = 0; i < inputs; i++) {
                        watermarks[i] = random.nextBoolean() ? Long.MIN_VALUE : random.nextLong();
                        idle[i] = random.nextBoolean();
                    }
                    return new Determinant.InputWatermarks(watermarks, idle);
                }
            case 10:
                return new Determinant.AlignmentCancelled(
                        random.nextInt(64), random.nextInt(Integer.MAX_VALUE));
            case 11:
                return new Determinant.SourceSplit(
                        random.nextInt(3),
                        random.nextBoolean()
                                ? "topic-" + random.nextInt(4)
                                : "\u00e9-" + random.nextInt(300));
            default:
                return new Determinant.BufferBuilt(random.nextInt(32 * 1024 + 1));
        }
    }

    static List<Determinant> randomDeterminants(Random random, int count) {
        List<Determinant> determinants = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            determinants.add(randomDeterminant(random));
        }
        return determinants;
    }

    @Test
    void determinantsRoundTrip() throws Exception {
        Random random = new Random(42);
        for (int run = 0; run < 2_000; run++) {
            List<Determinant> determinants = randomDeterminants(random, random.nextInt(50));
            assertThat(DeterminantEncoding.decode(DeterminantEncoding.encode(determinants)))
                    .isEqualTo(determinants);
        }
    }

    @Test
    void smallValuesTakeOneByteAndThereIsNoChannelLimit() throws Exception {
        assertThat(DeterminantEncoding.encode(List.of(new Determinant.Order(3, 0)))).hasSize(3);
        // ticks after the first one of an epoch: 3 ms and 5 elements later (tag and two
        // differences), at the next element 2 ms later (tag and difference), and at the next
        // element in the same millisecond (the tag alone)
        List<Determinant> ticks =
                List.of(
                        new Determinant.Timestamp(1_795_000_000_000L),
                        new Determinant.Timestamp(5, 1_795_000_000_003L),
                        new Determinant.Timestamp(6, 1_795_000_000_005L),
                        new Determinant.Timestamp(7, 1_795_000_000_005L));
        int first = DeterminantEncoding.encode(ticks.subList(0, 1)).length;
        assertThat(DeterminantEncoding.encode(ticks)).hasSize(first + 3 + 2 + 1);
        assertThat(DeterminantEncoding.decode(DeterminantEncoding.encode(ticks)))
                .containsExactlyElementsOf(ticks);
        assertThat(DeterminantEncoding.encode(List.of(new Determinant.BufferBuilt(100))))
                .hasSize(2);
        Determinant farChannel = new Determinant.Order(1_000_000, 32_768);
        assertThat(DeterminantEncoding.decode(DeterminantEncoding.encode(List.of(farChannel))))
                .containsExactly(farChannel);
    }

    /**
     * A run of ticks in one millisecond takes the tag and its length, whatever its length; it
     * continues the tick before it, or it is no run.
     */
    @Test
    void aRunOfTicksTakesTwoBytes() throws Exception {
        List<Determinant> ticks =
                List.of(
                        new Determinant.Timestamp(3, 1_795_000_000_000L),
                        new Determinant.Timestamp(4, 1_795_000_000_000L, 100),
                        new Determinant.Timestamp(104, 1_795_000_000_001L),
                        new Determinant.Timestamp(105, 1_795_000_000_001L, 2));
        int first = DeterminantEncoding.encode(ticks.subList(0, 1)).length;
        assertThat(DeterminantEncoding.encode(ticks)).hasSize(first + 2 + 2 + 2);
        assertThat(DeterminantEncoding.decode(DeterminantEncoding.encode(ticks)))
                .containsExactlyElementsOf(ticks);
        assertThat(((Determinant.Timestamp) ticks.get(1)).lastElement()).isEqualTo(103);

        assertThatThrownBy(
                        () ->
                                DeterminantEncoding.encode(
                                        List.of(
                                                new Determinant.Timestamp(3, 7),
                                                new Determinant.Timestamp(5, 7, 4))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no run");
        assertThatThrownBy(() -> new Determinant.Timestamp(3, 7, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(
                        () ->
                                DeterminantEncoding.decode(
                                        new byte[] {DeterminantEncoding.TICK_RUN, 1}))
                .isInstanceOf(CorruptCausalLogException.class)
                .hasMessageContaining("run of 1 ticks");
    }

    /**
     * A record's split takes two bytes when it is a split the epoch named before, one byte when it
     * is the previous record's, and the split's id once per epoch.
     */
    @Test
    void aRunOfRecordsFromOneSplitTakesAByteARecord() throws Exception {
        Determinant.SourceSplit p0 = new Determinant.SourceSplit("orders-0");
        Determinant.SourceSplit p7 = new Determinant.SourceSplit("orders-7");
        List<Determinant> records = List.of(p0, p0, p0, p7, p7, p0, p7);
        int named = 2 + 1 + 1 + "orders-0".length();
        assertThat(DeterminantEncoding.encode(records)).hasSize(named + 1 + 1 + named + 1 + 2 + 2);
        assertThat(DeterminantEncoding.decode(DeterminantEncoding.encode(records)))
                .containsExactlyElementsOf(records);
    }

    /** A run of records from the previous record's split takes its tag and length. */
    @Test
    void aRunOfSplitRecordsTakesTwoBytes() throws Exception {
        Determinant.SourceSplit p0 = new Determinant.SourceSplit("orders-0");
        List<Determinant> records =
                List.of(
                        p0,
                        new Determinant.SourceSplit(0, "orders-0", 300),
                        new Determinant.SourceSplit("orders-1"),
                        p0,
                        new Determinant.SourceSplit(0, "orders-0", 2));
        int named = 2 + 1 + 1 + "orders-0".length();
        assertThat(DeterminantEncoding.encode(records)).hasSize(named + 3 + named + 2 + 2);
        assertThat(DeterminantEncoding.decode(DeterminantEncoding.encode(records)))
                .containsExactlyElementsOf(records);
        assertThatThrownBy(
                        () ->
                                DeterminantEncoding.encode(
                                        List.of(p0, new Determinant.SourceSplit(0, "orders-1", 2))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no run");
        assertThatThrownBy(
                        () ->
                                DeterminantEncoding.decode(
                                        new byte[] {DeterminantEncoding.SOURCE_SPLIT_RUN, 5}))
                .isInstanceOf(CorruptCausalLogException.class)
                .hasMessageContaining("named no split");
    }

    /**
     * Two chained sources may name their splits alike: a split is named per input, and a run ends
     * where the input changes.
     */
    @Test
    void equallyNamedSplitsOfTwoInputsAreTwoSplits() throws Exception {
        Determinant.SourceSplit first = new Determinant.SourceSplit(1, "0");
        Determinant.SourceSplit second = new Determinant.SourceSplit(2, "0");
        Determinant.SourceSplit main =
                new Determinant.SourceSplit(2, Determinant.SourceSplit.MAIN_OUTPUT);
        List<Determinant> records = List.of(first, second, second, first, main, main);
        List<Determinant> decoded = DeterminantEncoding.decode(DeterminantEncoding.encode(records));
        assertThat(decoded).containsExactlyElementsOf(records);
        assertThat(((Determinant.SourceSplit) decoded.get(1)).input()).isEqualTo(2);
        assertThatThrownBy(() -> new Determinant.SourceSplit(-1, "0"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aSplitTheEpochDidNotNameIsRejected() {
        // split 1 of an epoch that named none; a run of the previous split before any split
        assertThatThrownBy(
                        () ->
                                DeterminantEncoding.decode(
                                        new byte[] {DeterminantEncoding.SOURCE_SPLIT, 1}))
                .isInstanceOf(CorruptCausalLogException.class)
                .hasMessageContaining("named 0 splits");
        assertThatThrownBy(
                        () ->
                                DeterminantEncoding.decode(
                                        new byte[] {DeterminantEncoding.SOURCE_SPLIT_SAME}))
                .isInstanceOf(CorruptCausalLogException.class)
                .hasMessageContaining("named no split");
        assertThatThrownBy(
                        () ->
                                DeterminantEncoding.decode(
                                        new byte[] {DeterminantEncoding.SOURCE_SPLIT, 0, 9, 'a'}))
                .isInstanceOf(CorruptCausalLogException.class);
    }

    @Test
    void deltasRoundTrip() throws Exception {
        Random random = new Random(7);
        for (int run = 0; run < 1_000; run++) {
            CausalLogId log =
                    new CausalLogId(
                            "v" + random.nextInt(10), random.nextInt(100), random.nextInt(5) - 1);
            byte[] bytes =
                    DeterminantEncoding.encode(randomDeterminants(random, random.nextInt(20)));
            CausalLogDelta delta =
                    new CausalLogDelta(log, random.nextInt(1000), random.nextInt(1 << 20), bytes);
            assertThat(CausalLogDelta.deserialize(delta.serialize())).isEqualTo(delta);
        }
    }

    /**
     * Cutting a log into random overlapping, repeated deltas and merging them rebuilds it exactly.
     */
    @Test
    void mergingOverlappingAndRepeatedDeltasIsIdempotent() throws Exception {
        Random random = new Random(11);
        for (int run = 0; run < 300; run++) {
            byte[] epoch =
                    DeterminantEncoding.encode(randomDeterminants(random, 1 + random.nextInt(40)));
            CausalLog log = new CausalLog();
            int covered = 0;
            while (covered < epoch.length) {
                int from = random.nextInt(covered + 1);
                int to = Math.min(epoch.length, covered + 1 + random.nextInt(16));
                CausalLogDelta delta =
                        new CausalLogDelta(LOG, 5, from, Arrays.copyOfRange(epoch, from, to));
                assertThat(log.merge(delta)).isEqualTo(to - covered);
                assertThat(log.merge(delta)).as("the same delta again adds nothing").isZero();
                covered = to;
            }
            assertThat(log.deltaSince(LOG, 5, 0).orElseThrow().bytes()).isEqualTo(epoch);
            assertThat(log.determinants(LOG, 5)).isEqualTo(DeterminantEncoding.decode(epoch));
        }
    }

    @Test
    void aDeltaThatLeavesAGapOrContradictsTheLogIsRejected() throws Exception {
        CausalLog log = new CausalLog();
        log.merge(new CausalLogDelta(LOG, 1, 0, new byte[] {1, 2, 3}));

        assertThatThrownBy(() -> log.merge(new CausalLogDelta(LOG, 1, 5, new byte[] {9})))
                .isInstanceOf(CorruptCausalLogException.class)
                .hasMessageContaining("gap");
        assertThatThrownBy(() -> log.merge(new CausalLogDelta(LOG, 1, 1, new byte[] {2, 7})))
                .isInstanceOf(CorruptCausalLogException.class)
                .hasMessageContaining("contradicts");
        assertThat(log.length(LOG, 1)).isEqualTo(3);
    }

    @Test
    void truncationDropsEpochsBeforeTheCompletedCheckpoint() throws Exception {
        CausalLog log = new CausalLog();
        for (long epoch = 1; epoch <= 4; epoch++) {
            log.merge(
                    new CausalLogDelta(
                            LOG,
                            epoch,
                            0,
                            DeterminantEncoding.encode(List.of(new Determinant.Timestamp(epoch)))));
        }

        log.truncateBefore(3);

        assertThat(log.length(LOG, 1)).isZero();
        assertThat(log.length(LOG, 2)).isZero();
        assertThat(log.determinants(LOG, 3)).containsExactly(new Determinant.Timestamp(3));
        assertThat(log.determinants(LOG, 4)).containsExactly(new Determinant.Timestamp(4));
        assertThat(log.deltaSince(LOG, 4, log.length(LOG, 4)))
                .as("nothing after the end")
                .isEmpty();
    }

    /**
     * Fuzz: every single-bit flip, every truncation and random byte overwrites of serialized deltas
     * are rejected. A corrupt delta must never be merged as if it were valid.
     */
    @Test
    void corruptDeltasAreRejected() throws Exception {
        Random random = new Random(2024);
        int rejected = 0;
        for (int run = 0; run < 50; run++) {
            byte[] bytes =
                    DeterminantEncoding.encode(randomDeterminants(random, 1 + random.nextInt(10)));
            byte[] serialized =
                    new CausalLogDelta(LOG, run, random.nextInt(100), bytes).serialize();
            for (int bit = 0; bit < serialized.length * 8; bit++) {
                byte[] flipped = serialized.clone();
                flipped[bit / 8] ^= (byte) (1 << (bit % 8));
                assertThatThrownBy(() -> CausalLogDelta.deserialize(flipped))
                        .isInstanceOf(CorruptCausalLogException.class);
                rejected++;
            }
            for (int length = 0; length < serialized.length; length++) {
                byte[] truncated = Arrays.copyOf(serialized, length);
                assertThatThrownBy(() -> CausalLogDelta.deserialize(truncated))
                        .isInstanceOf(CorruptCausalLogException.class);
                rejected++;
            }
            for (int overwrite = 0; overwrite < 200; overwrite++) {
                byte[] garbage = serialized.clone();
                int at = random.nextInt(garbage.length);
                byte replacement = (byte) random.nextInt(256);
                if (garbage[at] == replacement) {
                    continue;
                }
                garbage[at] = replacement;
                assertThatThrownBy(() -> CausalLogDelta.deserialize(garbage))
                        .isInstanceOf(CorruptCausalLogException.class);
                rejected++;
            }
        }
        assertThat(rejected).isGreaterThan(10_000);
    }

    /** Random bytes fed to the determinant decoder either decode or are rejected; nothing else. */
    @Test
    void randomBytesNeverCrashTheDecoder() {
        Random random = new Random(5);
        for (int run = 0; run < 20_000; run++) {
            byte[] bytes = new byte[random.nextInt(40)];
            random.nextBytes(bytes);
            try {
                List<Determinant> decoded = DeterminantEncoding.decode(bytes);
                assertThat(DeterminantEncoding.decode(DeterminantEncoding.encode(decoded)))
                        .as("what decodes is a valid log")
                        .isEqualTo(decoded);
            } catch (CorruptCausalLogException expected) {
                // rejected: fine
            }
        }
    }
}
