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
import io.clonos.runtime.causal.CausalRecovery;
import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.Determinant;
import io.clonos.runtime.causal.TaskCausalLog;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/**
 * What a running task's causal side costs per element it processes, on the task thread as Clonos's
 * tasks call it: counting the element (and looking for due timers, which only a replay has), with
 * its input's order logged, with a wall-clock reading, and a timer firing. The task takes a
 * checkpoint, which starts an epoch and truncates the last, every 64 Ki elements.
 */
public class CausalTaskBenchmark extends PerRecordBenchmark {

    CausalTask task;
    private long epoch;
    private int elements;
    private long clock = 1_700_000_000_000L;

    @Setup
    public void setUp() {
        epoch = 1;
        CausalLogId id = CausalLogId.main("benchmark", 0);
        task =
                new CausalTask(
                        new TaskCausalLog(id, epoch),
                        CausalRecovery.notRecovering("benchmark", id),
                        2,
                        1,
                        -1);
        task.processingStarted();
    }

    /** An element whose order nothing logs (a task with one input channel). */
    @Benchmark
    public long element() {
        task.beforeElement();
        return next();
    }

    /** An element and its input order (a task with two input channels). */
    @Benchmark
    public long elementWithItsOrder() {
        task.beforeElement();
        task.logged(new Determinant.Order(elements & 1, 128));
        return next();
    }

    /** An element whose processing reads the wall clock (a processing-time window). */
    @Benchmark
    public long elementReadingTheClock() {
        task.beforeElement();
        long now = task.timestamp(() -> clock++);
        return next() + now;
    }

    /**
     * An element of a busy processing-time window: it reads the clock in the millisecond of the
     * element before but every 512th, so its tick extends the log's open run.
     */
    @Benchmark
    public long elementReadingTheClockInABusyMillisecond() {
        task.beforeElement();
        long now = task.timestamp(() -> 1_700_000_000_000L + (elements >>> 9));
        return next() + now;
    }

    /** A processing-time timer fires. */
    @Benchmark
    public long timerFiring() {
        task.timerFiring(0, clock++);
        return next();
    }

    private long next() {
        if (++elements == DeterminantLogBenchmark.EPOCH_LENGTH) {
            elements = 0;
            task.epochStarted(++epoch);
            task.log().truncateBefore(epoch);
            task.checkpointCompleted(epoch);
        }
        return elements;
    }
}
