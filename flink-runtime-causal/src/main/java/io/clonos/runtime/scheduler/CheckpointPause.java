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

package io.clonos.runtime.scheduler;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.checkpoint.CheckpointCoordinator;
import org.apache.flink.runtime.concurrent.ComponentMainThreadExecutor;
import org.apache.flink.runtime.scheduler.SchedulerBase;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;

import org.slf4j.Logger;

import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Holds the job's periodic checkpoints back while locally restarted tasks replay their
 * predecessors' determinants ({@code clonos.recovery.checkpoint-pause}).
 *
 * <p>Why: Clonos's checkpoints are aligned (their barriers delimit its epochs). A checkpoint
 * triggered during a replay reaches the surviving sources' barriers to a surviving consumer at
 * once, but the replaying producers' barriers only after their replay; the consumer holds the
 * inputs whose barriers it has until then, so the part of the job that did not fail stalls on the
 * part that did. A replaying source declines such a checkpoint outright, and the alignment its
 * consumers opened stays open until a later barrier comes through. Off by default: a pause does not
 * release alignments opened before the loss (docs/experiments-archive.md has the measurements).
 *
 * <p>The pause starts when a batch of restarted attempts is deployed and ends when each of them
 * reported its replay's end ({@link io.clonos.runtime.protocol.ReplayEndReport}) or ended, at the
 * latest after the configured limit: a lost report only delays checkpoints, never stops them. Only
 * a pause this class started is ended by it: where Flink stopped the scheduler (the job left
 * RUNNING, stop-with-savepoint), Flink starts it again.
 *
 * <p>The price: the restarted tasks count as still recovering ({@link LocalFailoverPolicy}) until
 * the first checkpoint after the pause completes, so a second loss in that longer window is judged
 * together with them. The JobManager's main thread only, but for the metric.
 *
 * @param <V> how the graph names a task
 */
@Internal
final class CheckpointPause<V> {

    /** The JobManager's metric: how long checkpoints were held back in all, in milliseconds. */
    static final String HELD_BACK_METRIC = "checkpointsHeldBackMillis";

    /** The job's periodic checkpoint scheduling, as the pause needs it. */
    interface Checkpoints {
        /** Whether the job takes periodic checkpoints at all. */
        boolean periodic();

        /** Whether periodic checkpoints are being triggered now. */
        boolean triggering();

        void stop();

        /**
         * Starts them, with one checkpoint at once rather than after Flink's random initial delay
         * of up to an interval: the epochs grew during the pause, and so would the replay of a
         * further loss; a transactional sink's readers also see its output only when a checkpoint
         * completes.
         */
        void start();
    }

    private final Duration limit;
    private final Checkpoints checkpoints;
    private final Predicate<V> alive;
    private final BiConsumer<Runnable, Duration> timer;
    private final LongSupplier nanoClock;
    private final Logger log;

    /** The restarted tasks whose replay has not ended yet. */
    private final Set<V> replaying = new HashSet<>();

    /** Whether this pause stopped the checkpoints (and so must start them). */
    private volatile boolean paused;

    /** Counts pauses, so that the limit of an earlier one does not end a later one. */
    private long pauses;

    /** When the current pause began, and the earlier pauses' sum, in nanoseconds. */
    private volatile long pausedSinceNanos;

    private volatile long heldBackNanos;

    /**
     * @param limit the longest pause; zero: never pause
     * @param alive whether a task may still report (its current attempt has not ended)
     * @param timer runs an action after a delay, on the main thread
     * @param nanoClock the time in nanoseconds, for the metric
     */
    CheckpointPause(
            Duration limit,
            Checkpoints checkpoints,
            Predicate<V> alive,
            BiConsumer<Runnable, Duration> timer,
            LongSupplier nanoClock,
            Logger log) {
        this.limit = limit;
        this.checkpoints = checkpoints;
        this.alive = alive;
        this.timer = timer;
        this.nanoClock = nanoClock;
        this.log = log;
    }

    /**
     * The pause of a job's scheduler: it stops and starts the coordinator's periodic checkpoints
     * (starting only while the job runs), and a restarted task may report while its current attempt
     * has not ended.
     */
    static CheckpointPause<ExecutionVertexID> of(
            Duration limit,
            SchedulerBase scheduler,
            ComponentMainThreadExecutor mainThread,
            MetricGroup metrics,
            Logger log) {
        Checkpoints checkpoints =
                new Checkpoints() {
                    @Override
                    public boolean periodic() {
                        CheckpointCoordinator coordinator =
                                scheduler.getExecutionGraph().getCheckpointCoordinator();
                        return coordinator != null
                                && coordinator.isPeriodicCheckpointingConfigured();
                    }

                    @Override
                    public boolean triggering() {
                        CheckpointCoordinator coordinator =
                                scheduler.getExecutionGraph().getCheckpointCoordinator();
                        return coordinator != null && coordinator.isPeriodicCheckpointingStarted();
                    }

                    @Override
                    public void stop() {
                        scheduler.stopCheckpointScheduler();
                    }

                    @Override
                    public void start() {
                        if (scheduler.getExecutionGraph().getState() == JobStatus.RUNNING) {
                            scheduler.startCheckpointScheduler();
                            CheckpointCoordinator coordinator =
                                    scheduler.getExecutionGraph().getCheckpointCoordinator();
                            if (coordinator != null) {
                                // a failure is the coordinator's to log and count, as a periodic
                                // one
                                coordinator.triggerCheckpoint(true);
                            }
                        }
                    }
                };
        CheckpointPause<ExecutionVertexID> pause =
                new CheckpointPause<>(
                        limit,
                        checkpoints,
                        vertex ->
                                !scheduler
                                        .getExecutionGraph()
                                        .getJobVertex(vertex.getJobVertexId())
                                        .getTaskVertices()[vertex.getSubtaskIndex()]
                                        .getExecutionState()
                                        .isTerminal(),
                        (action, delay) ->
                                mainThread.schedule(
                                        action, delay.toMillis(), TimeUnit.MILLISECONDS),
                        System::nanoTime,
                        log);
        metrics.gauge(HELD_BACK_METRIC, (Gauge<Long>) pause::heldBackMillis);
        scheduler
                .getExecutionGraph()
                .registerJobStatusListener(
                        (job, status, timestamp) -> {
                            if (status != JobStatus.RUNNING) {
                                pause.jobLeftRunning();
                            }
                        });
        return pause;
    }

    /** The tasks of a local restart are deployed: checkpoints wait for their replays. */
    void replaying(Collection<V> tasks) {
        if (limit.isZero() || tasks.isEmpty() || !checkpoints.periodic()) {
            return;
        }
        if (!paused) {
            if (!checkpoints.triggering()) {
                // Flink stopped them (the job is not running, or a savepoint stops it)
                return;
            }
            replaying.clear();
            checkpoints.stop();
            paused = true;
            pausedSinceNanos = nanoClock.getAsLong();
        }
        replaying.addAll(tasks);
        log.info(
                "Holding checkpoints back while {} restarted tasks replay (at most {} ms).",
                replaying.size(),
                limit.toMillis());
        long pause = ++pauses;
        timer.accept(() -> limitReached(pause), limit);
    }

    /** {@code task} reported its replay's end. */
    void replayEnded(V task) {
        if (replaying.remove(task)) {
            resumeIfDone();
        }
    }

    /**
     * A task switched to RUNNING. Flink then starts periodic checkpoints that are stopped, whoever
     * stopped them ({@code DefaultExecutionGraph}): a pause stops them again at once, before their
     * first trigger, which comes after at least the minimum pause between checkpoints.
     */
    void taskRunning() {
        if (paused && checkpoints.triggering()) {
            checkpoints.stop();
        }
    }

    /**
     * The job left RUNNING (a global restart, a suspension, its end): Flink stops the checkpoints
     * and starts them when the job runs again, so the pause is over without starting anything.
     */
    void jobLeftRunning() {
        if (paused) {
            end();
            replaying.clear();
            log.info("The job left RUNNING; checkpoints held back for replays are Flink's again.");
        }
    }

    /** An attempt failed or was cancelled: it will not report; later ones may be waited for. */
    void attemptEnded() {
        if (paused) {
            replaying.removeIf(task -> !alive.test(task));
            resumeIfDone();
        }
    }

    /** Whether checkpoints are held back now. */
    boolean isPaused() {
        return paused;
    }

    /** How long checkpoints were held back in all, the current pause included. Any thread. */
    long heldBackMillis() {
        long since = pausedSinceNanos;
        long current = paused ? nanoClock.getAsLong() - since : 0;
        return TimeUnit.NANOSECONDS.toMillis(heldBackNanos + current);
    }

    private void resumeIfDone() {
        if (paused && replaying.isEmpty()) {
            resume();
            log.info("Every restarted task replayed; checkpoints resume.");
        }
    }

    private void limitReached(long pause) {
        if (paused && pause == pauses) {
            log.warn(
                    "{} restarted tasks did not report their replay's end within {} ms "
                            + "(clonos.recovery.checkpoint-pause); checkpoints resume.",
                    replaying.size(),
                    limit.toMillis());
            replaying.clear();
            resume();
        }
    }

    /** The pause is over: its time counts as held back. */
    private void end() {
        paused = false;
        heldBackNanos += nanoClock.getAsLong() - pausedSinceNanos;
    }

    /** Starts the checkpoints again unless Flink did; {@link Checkpoints#start} only if running. */
    private void resume() {
        end();
        if (!checkpoints.triggering()) {
            checkpoints.start();
        }
    }
}
