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

import io.clonos.runtime.causal.TaskCausalLog;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * {@link CausalTaskBenchmark}'s elements while a consumer connection takes the task's log every
 * {@value #READ_INTERVAL_MICROS} µs, as Netty's thread does with every buffer it sends: the log's
 * lock is then contended now and then, which a benchmark on one thread never shows, and which a
 * busy task pays at every element that takes the lock. (The reader starts with each iteration,
 * after the task was set up.)
 */
public class CausalTaskUnderReadsBenchmark extends CausalTaskBenchmark {

    static final long READ_INTERVAL_MICROS = 100;

    private volatile boolean reading;
    private Thread consumer;

    /** Reads that took something (the benchmark's test checks that the consumer reads). */
    volatile long takes;

    @Setup(Level.Iteration)
    public void startReading() {
        reading = true;
        TaskCausalLog log = task.log();
        consumer =
                new Thread(
                        () -> {
                            TaskCausalLog.Position position = new TaskCausalLog.Position();
                            while (reading) {
                                if (!log.deltasSince(position).isEmpty()) {
                                    takes++;
                                }
                                LockSupport.parkNanos(
                                        TimeUnit.MICROSECONDS.toNanos(READ_INTERVAL_MICROS));
                            }
                        },
                        "consumer connection");
        consumer.setDaemon(true);
        consumer.start();
    }

    @TearDown(Level.Iteration)
    public void stopReading() throws InterruptedException {
        reading = false;
        consumer.join();
    }
}
