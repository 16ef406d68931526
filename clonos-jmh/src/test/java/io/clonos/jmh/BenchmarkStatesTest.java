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

package io.clonos.jmh;

import io.clonos.runtime.causal.CausalLogId;
import io.clonos.runtime.causal.TaskCausalLog;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The benchmarks measure what they say, and stay in bounded memory however long they run: each
 * operation, run for a few epochs outside JMH, has its effect, and what an epoch kept is truncated.
 * No timing here; the figures come from bin/jmh.
 */
class BenchmarkStatesTest {

    private static final int EPOCHS = 3;

    @Test
    void determinantAppendsLandInTheLogAndEpochsAreTruncated() throws Exception {
        DeterminantLogBenchmark benchmark = new DeterminantLogBenchmark();
        benchmark.setUp();
        for (int i = 0; i < EPOCHS * DeterminantLogBenchmark.EPOCH_LENGTH; i++) {
            benchmark.appendOrder();
            benchmark.appendSourceSplit();
            benchmark.appendTimestamp();
            benchmark.appendTimerFired();
        }
        long total = benchmark.log.totalBytes();
        assertThat(total).isGreaterThan(4L * EPOCHS * DeterminantLogBenchmark.EPOCH_LENGTH / 2);
        assertThat(benchmark.log.retainedBytes()).isLessThan(total / (2 * EPOCHS));
        assertThat(benchmark.decodeBatchOf64()).hasSize(64);
        assertThat(benchmark.encodeBatchOf64()).isNotEmpty();
    }

    @Test
    void ticksOfABusyTaskCostFarLessThanAByte() {
        DeterminantLogBenchmark benchmark = new DeterminantLogBenchmark();
        benchmark.setUp();
        for (int i = 0; i < DeterminantLogBenchmark.EPOCH_LENGTH / 2; i++) {
            benchmark.appendTick();
        }
        benchmark.log.deltasSince(new TaskCausalLog.Position());
        assertThat(benchmark.log.totalBytes())
                .isPositive()
                .isLessThan(DeterminantLogBenchmark.EPOCH_LENGTH / 20);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 16})
    void piggybackedDeltasRebuildTheProducersLogAtTheConsumer(int perBuffer) throws Exception {
        PiggybackBenchmark benchmark = new PiggybackBenchmark();
        benchmark.determinantsPerBuffer = perBuffer;
        benchmark.setUp();
        long merged = 0;
        for (int i = 0; i < 100; i++) {
            merged += benchmark.piggybackOneBuffer();
        }
        assertThat(merged).isPositive().isEqualTo(benchmark.producer.totalBytes());
        assertThat(benchmark.consumer.length(CausalLogId.main("producer", 0), 1)).isEqualTo(merged);
    }

    @ParameterizedTest
    @ValueSource(strings = {"in-memory", "eager", "epoch", "availability"})
    void inFlightLogsKeepAboutOneEpochOfBuffers(String log) throws Exception {
        InFlightLogAppendBenchmark benchmark = new InFlightLogAppendBenchmark();
        benchmark.log = log;
        benchmark.setUp();
        try {
            long epochBytes =
                    (long) InFlightLogAppendBenchmark.BUFFER_BYTES
                            * InFlightLogAppendBenchmark.BUFFERS_PER_EPOCH;
            long maxSize = 0;
            for (int i = 0; i < EPOCHS * InFlightLogAppendBenchmark.BUFFERS_PER_EPOCH; i++) {
                maxSize = Math.max(maxSize, benchmark.appendOneBuffer());
            }
            assertThat(maxSize).isGreaterThan(0).isLessThanOrEqualTo(2 * epochBytes);
        } finally {
            benchmark.tearDown();
        }
        assertThat(benchmark.spillDirectory()).as("spill files left behind").isNull();
    }

    @Test
    void aRunningTaskLogsOrdersTicksAndTimersAndTruncatesItsEpochs() {
        CausalTaskBenchmark benchmark = new CausalTaskBenchmark();
        benchmark.setUp();
        benchmark.element();
        assertThat(benchmark.task.log().totalBytes()).isZero();
        for (int i = 0; i < EPOCHS * DeterminantLogBenchmark.EPOCH_LENGTH; i++) {
            benchmark.elementWithItsOrder();
            benchmark.elementReadingTheClock();
            benchmark.timerFiring();
        }
        long total = benchmark.task.log().totalBytes();
        assertThat(total).isGreaterThan(EPOCHS * DeterminantLogBenchmark.EPOCH_LENGTH);
        assertThat(benchmark.task.log().retainedBytes()).isLessThan(total / 2);
    }

    @Test
    void aBusyWindowsTicksExtendRunsAndCostFarLessThanAByte() {
        CausalTaskBenchmark benchmark = new CausalTaskBenchmark();
        benchmark.setUp();
        int elements = DeterminantLogBenchmark.EPOCH_LENGTH / 2;
        for (int i = 0; i < elements; i++) {
            benchmark.elementReadingTheClockInABusyMillisecond();
        }
        benchmark.task.log().deltasSince(new TaskCausalLog.Position());
        assertThat(benchmark.task.log().totalBytes()).isPositive().isLessThan(elements / 20);
    }

    /** The consumer connection of the benchmark under reads takes the log while the task runs. */
    @Test
    void aConsumerTakesTheLogWhileTheTaskRuns() throws Exception {
        CausalTaskUnderReadsBenchmark benchmark = new CausalTaskUnderReadsBenchmark();
        benchmark.setUp();
        benchmark.startReading();
        try {
            while (benchmark.takes == 0) {
                benchmark.elementReadingTheClock();
            }
        } finally {
            benchmark.stopReading();
        }
        long taken = benchmark.takes;
        benchmark.elementReadingTheClock();
        assertThat(benchmark.takes).as("no read after the iteration").isEqualTo(taken);
    }
}
