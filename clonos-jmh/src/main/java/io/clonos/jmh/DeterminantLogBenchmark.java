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
import io.clonos.runtime.causal.CorruptCausalLogException;
import io.clonos.runtime.causal.Determinant;
import io.clonos.runtime.causal.DeterminantEncoding;
import io.clonos.runtime.causal.TaskCausalLog;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

import java.util.ArrayList;
import java.util.List;

/**
 * What a task pays per determinant it logs: the append of each kind that the per-record path logs
 * (an input read, a source split, a wall-clock tick, a timer firing) to the task's own causal log,
 * and the encoding and decoding of a batch of mixed determinants. The log starts a new epoch and
 * truncates the old one every {@link #EPOCH_LENGTH} appends, as checkpoints do, so that its memory
 * stays bounded however long the benchmark runs.
 */
public class DeterminantLogBenchmark extends PerRecordBenchmark {

    /** Appends per epoch: a checkpoint every 64 Ki determinants. */
    static final int EPOCH_LENGTH = 1 << 16;

    private static final Determinant.SourceSplit[] SPLITS = {
        new Determinant.SourceSplit("topic-0"),
        new Determinant.SourceSplit("topic-1"),
        new Determinant.SourceSplit("topic-2"),
        new Determinant.SourceSplit("topic-3")
    };

    TaskCausalLog log;
    private long epoch;
    private int appended;
    private long records;

    private byte[] encoded;
    private List<Determinant> batch;

    @Setup
    public void setUp() {
        epoch = 1;
        log = new TaskCausalLog(CausalLogId.main("benchmark", 0), epoch);
        batch = mixedBatch(64);
        encoded = DeterminantEncoding.encode(batch);
    }

    /** 64 determinants as a task with two input channels and a timer logs them. */
    static List<Determinant> mixedBatch(int size) {
        List<Determinant> determinants = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            switch (i % 4) {
                case 0 -> determinants.add(new Determinant.Order(i % 2, 32 * 1024));
                case 1 -> determinants.add(new Determinant.Timestamp(i, 1_700_000_000_000L + i));
                case 2 -> determinants.add(SPLITS[i % SPLITS.length]);
                default -> determinants.add(new Determinant.TimerFired(i, 0, 1_700_000_000_000L));
            }
        }
        return determinants;
    }

    @Benchmark
    public long appendOrder() {
        return append(new Determinant.Order((int) (records & 1), 32 * 1024));
    }

    @Benchmark
    public long appendSourceSplit() {
        return append(SPLITS[(int) (records >>> 3) & 3]);
    }

    @Benchmark
    public long appendTimestamp() {
        return append(new Determinant.Timestamp(records, 1_700_000_000_000L + (records >>> 4)));
    }

    /**
     * A busy task's tick: at the next element of its epoch, and, but every 512th, in the
     * millisecond of the tick before, so it only extends the log's open run.
     */
    @Benchmark
    public long appendTick() {
        log.appendFresh(
                new Determinant.Timestamp(appended + 1, 1_700_000_000_000L + (records >>> 9)));
        return appended();
    }

    @Benchmark
    public long appendTimerFired() {
        return append(new Determinant.TimerFired(records, 0, 1_700_000_000_000L + records));
    }

    /** Encodes 64 mixed determinants; per operation, so divide by 64 for one. */
    @Benchmark
    public byte[] encodeBatchOf64() {
        return DeterminantEncoding.encode(batch);
    }

    /** Decodes 64 mixed determinants, as a recovering task does with the log it is handed. */
    @Benchmark
    public List<Determinant> decodeBatchOf64() throws CorruptCausalLogException {
        return DeterminantEncoding.decode(encoded);
    }

    private long append(Determinant determinant) {
        log.append(determinant);
        return appended();
    }

    private long appended() {
        records++;
        if (++appended == EPOCH_LENGTH) {
            appended = 0;
            log.startEpoch(++epoch);
            log.truncateBefore(epoch);
        }
        return records;
    }
}
