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

package io.clonos.streaming.causal;

import io.clonos.runtime.causal.CausalTask;

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;
import org.apache.flink.util.clock.Clock;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/**
 * The processing-time service of one operator in a Clonos task: Flink's, with every reading of the
 * time on the task thread logged (and replayed) as a determinant and every timer replayable ({@link
 * CausalTimers}). Windows, timers of process functions, periodic watermarks and the causal services
 * of user functions all read time and register timers through it.
 */
@Internal
public final class CausalProcessingTimeService implements ProcessingTimeService {

    private final ProcessingTimeService delegate;
    private final CausalTimers timers;
    private final int serviceId;

    CausalProcessingTimeService(
            ProcessingTimeService delegate, CausalTimers timers, int serviceId) {
        this.delegate = delegate;
        this.timers = timers;
        this.serviceId = serviceId;
    }

    /** The causal side of the task this service belongs to. */
    public CausalTask task() {
        return timers.task();
    }

    /**
     * Flink's service underneath: readings and timers neither logged nor replayed, for an operator
     * whose choices reach the log by another way (a watermark assigner, whose watermarks are logged
     * where they are emitted).
     */
    public ProcessingTimeService unlogged() {
        return delegate;
    }

    @Override
    public long getCurrentProcessingTime() {
        // a reading on another thread is neither logged nor replayed: CausalTask decides that
        return timers.task().timestamp(delegate::getCurrentProcessingTime);
    }

    @Override
    public Clock getClock() {
        return delegate.getClock();
    }

    @Override
    public ScheduledFuture<?> registerTimer(long timestamp, ProcessingTimeCallback target) {
        return timers.register(delegate, serviceId, timestamp, target);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(
            ProcessingTimeCallback callback, long initialDelay, long period) {
        return timers.registerPeriodic(
                callback, wrapped -> delegate.scheduleAtFixedRate(wrapped, initialDelay, period));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(
            ProcessingTimeCallback callback, long initialDelay, long period) {
        return timers.registerPeriodic(
                callback,
                wrapped -> delegate.scheduleWithFixedDelay(wrapped, initialDelay, period));
    }

    @Override
    public CompletableFuture<Void> quiesce() {
        return delegate.quiesce();
    }
}
