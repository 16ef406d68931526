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
 * falls back instead of waiting forever. One daemon thread for the whole TaskManager.
 */
@Internal
public final class RecoveryDeadlines {

    private static final ScheduledExecutorService TIMER =
            Executors.newSingleThreadScheduledExecutor(
                    runnable -> {
                        Thread thread = new Thread(runnable, "clonos-recovery-deadlines");
                        thread.setDaemon(true);
                        return thread;
                    });

    private RecoveryDeadlines() {}

    /** Runs {@code wake} (which must be quick: it completes a future) after the delay. */
    public static void wakeAfter(long delay, TimeUnit unit, Runnable wake) {
        TIMER.schedule(wake, delay, unit);
    }
}
