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

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Wakes tasks that wait for something with a deadline (a producer to come back, consumers to
 * answer, a replay to move on), so that a task idle in its mailbox notices the deadline passed and
 * falls back instead of waiting forever. One daemon thread per TaskManager, started when a task
 * first waits and stopped with the TaskManager's network ({@link #close}).
 */
@Internal
public final class RecoveryDeadlines implements AutoCloseable {

    private final String owner;
    private ScheduledExecutorService timer;
    private boolean closed;

    /**
     * @param owner names the thread, e.g. the TaskManager's
     */
    public RecoveryDeadlines(String owner) {
        this.owner = owner;
    }

    /** Runs {@code wake} (which must be quick: it completes a future) after the delay. */
    public void wakeAfter(long delay, TimeUnit unit, Runnable wake) {
        ScheduledExecutorService current;
        synchronized (this) {
            if (closed) {
                // the TaskManager shuts down: nothing waits any more
                return;
            }
            if (timer == null) {
                timer =
                        Executors.newSingleThreadScheduledExecutor(
                                runnable -> {
                                    Thread thread =
                                            new Thread(
                                                    runnable,
                                                    "clonos-recovery-deadlines (" + owner + ")");
                                    thread.setDaemon(true);
                                    return thread;
                                });
            }
            current = timer;
        }
        current.schedule(wake, delay, unit);
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
