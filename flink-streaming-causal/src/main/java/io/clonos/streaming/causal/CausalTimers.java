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
import io.clonos.runtime.causal.Determinant;
import io.clonos.runtime.causal.LocalRecoveryImpossibleException;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.operators.ProcessingTimeService.ProcessingTimeCallback;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;

import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The processing-time timers of one task, made replayable. A firing is logged with the number of
 * stream elements the task had processed ({@link CausalTask#timerFiring}); while the task waits or
 * replays, timers are only noted, and the logged firings invoke them at their logged points ({@link
 * #claim}); once the task runs normally, the timers still pending are handed to Flink's timer
 * service.
 *
 * <p>A one-shot timer is identified by its operator's service and its timestamp; a periodic one by
 * the order in which the task registered periodic timers, which is the same in every attempt.
 */
@Internal
public final class CausalTimers {

    /**
     * How often a timer that is due while the task's output regenerates what its consumers received
     * looks again: short, since regeneration runs at the speed of the replayed input.
     */
    static final long REGENERATION_RETRY_MILLIS = 5;

    /** Timer ids from here on name periodic timers; below, the service of a one-shot timer. */
    static final int PERIODIC = 1 << 20;

    private final CausalTask task;

    @GuardedBy("this")
    private final Map<Key, ArrayDeque<Timer>> waiting = new HashMap<>();

    @GuardedBy("this")
    private final Map<Integer, ProcessingTimeCallback> periodic = new HashMap<>();

    private int services;
    private int periodicTimers;

    public CausalTimers(CausalTask task) {
        this.task = task;
        task.setTimerReplayer(this::claim);
        task.recovery().whenRunning(this::startWaitingTimers);
    }

    /** Wraps the timer service of one operator. */
    public ProcessingTimeService wrap(ProcessingTimeService operatorService) {
        return new CausalProcessingTimeService(operatorService, this, services++);
    }

    CausalTask task() {
        return task;
    }

    ScheduledFuture<?> register(
            ProcessingTimeService service,
            int serviceId,
            long timestamp,
            ProcessingTimeCallback callback) {
        Timer timer = new Timer(service, serviceId, timestamp, callback);
        synchronized (this) {
            if (!task.recovery().isRunning()) {
                waiting.computeIfAbsent(new Key(serviceId, timestamp), k -> new ArrayDeque<>())
                        .add(timer);
                return timer;
            }
        }
        timer.start();
        return timer;
    }

    ScheduledFuture<?> registerPeriodic(
            ProcessingTimeCallback callback,
            Function<ProcessingTimeCallback, ScheduledFuture<?>> schedule) {
        int id = PERIODIC + periodicTimers++;
        synchronized (this) {
            periodic.put(id, callback);
        }
        return schedule.apply(
                time -> {
                    // while the task replays, the logged firings stand in for the live ones; while
                    // its
                    // output regenerates what consumers received, its predecessor fired none
                    if (task.choosesFreely()) {
                        task.timerFiring(id, time);
                        callback.onProcessingTime(time);
                    }
                });
    }

    /**
     * Takes the timer its predecessor fired at this point from the waiting ones, while the task
     * still replays; the returned action invokes it.
     */
    private Runnable claim(Determinant.TimerFired fired) {
        ProcessingTimeCallback callback;
        synchronized (this) {
            if (fired.timerId() >= PERIODIC) {
                callback = periodic.get(fired.timerId());
            } else {
                Key key = new Key(fired.timerId(), fired.timestamp());
                ArrayDeque<Timer> timers = waiting.get(key);
                Timer timer = timers == null ? null : timers.poll();
                if (timers != null && timers.isEmpty()) {
                    waiting.remove(key);
                }
                callback = timer == null ? null : timer.firedByReplay();
            }
        }
        if (callback == null) {
            throw new LocalRecoveryImpossibleException(
                    "The recovered task has no timer for " + fired + " that its predecessor fired");
        }
        return () -> {
            try {
                callback.onProcessingTime(fired.timestamp());
            } catch (Exception e) {
                throw new IllegalStateException("A replayed timer failed", e);
            }
        };
    }

    private void startWaitingTimers() {
        Map<Key, ArrayDeque<Timer>> toStart;
        synchronized (this) {
            toStart = new HashMap<>(waiting);
            waiting.clear();
        }
        toStart.values().forEach(timers -> timers.forEach(Timer::start));
    }

    private synchronized void cancelled(Timer timer) {
        ArrayDeque<Timer> timers = waiting.get(new Key(timer.serviceId, timer.timestamp));
        if (timers != null) {
            timers.remove(timer);
            if (timers.isEmpty()) {
                waiting.remove(new Key(timer.serviceId, timer.timestamp));
            }
        }
    }

    private record Key(int serviceId, long timestamp) {}

    /** A one-shot timer: noted while the task replays, then Flink's. */
    private final class Timer implements ScheduledFuture<Object> {
        private final ProcessingTimeService service;
        private final int serviceId;
        private final long timestamp;
        private final ProcessingTimeCallback callback;
        @Nullable private volatile ScheduledFuture<?> started;
        private volatile boolean cancelled;
        private volatile boolean done;

        Timer(
                ProcessingTimeService service,
                int serviceId,
                long timestamp,
                ProcessingTimeCallback callback) {
            this.service = service;
            this.serviceId = serviceId;
            this.timestamp = timestamp;
            this.callback = callback;
        }

        void start() {
            if (cancelled) {
                return;
            }
            started = service.registerTimer(timestamp, this::fire);
        }

        /** Fires the timer; Flink calls it at its timestamp, or later. */
        private void fire(long now) throws Exception {
            if (cancelled) {
                return;
            }
            if (!task.choosesFreely()) {
                // overdue after a recovery, but the output still regenerates what consumers
                // received, before which the predecessor fired no timer: a little later
                started =
                        service.registerTimer(
                                service.getCurrentProcessingTime() + REGENERATION_RETRY_MILLIS,
                                this::fire);
                return;
            }
            done = true;
            task.timerFiring(serviceId, timestamp);
            callback.onProcessingTime(timestamp);
        }

        ProcessingTimeCallback firedByReplay() {
            done = true;
            return callback;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            cancelled = true;
            ScheduledFuture<?> real = started;
            if (real != null) {
                return real.cancel(mayInterruptIfRunning);
            }
            cancelled(this);
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done || cancelled;
        }

        @Override
        public Object get() {
            return null;
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            return null;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(timestamp - System.currentTimeMillis(), TimeUnit.MILLISECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(
                    getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
        }
    }
}
