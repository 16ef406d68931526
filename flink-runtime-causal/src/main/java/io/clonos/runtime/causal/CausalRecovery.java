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

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The recovery of one task with determinants, as a state machine (paper section 5):
 *
 * <pre>
 *   WAITING_FOR_CONNECTIONS -> WAITING_FOR_DETERMINANTS -> REPLAYING -> RUNNING
 * </pre>
 *
 * <p>A task that is not recovering starts in RUNNING. A recovering task waits until every consumer
 * subpartition has a connection, then until every consumer has answered with the task's
 * determinants it holds ({@link #determinantsReceived}); it replays by them, and runs normally once
 * they are used up. Answers that arrive before the last connection, or that hold no determinants,
 * skip states forward; nothing ever goes back ({@link RecoveryState#canBecome}).
 *
 * <p>During the replay every part of the task that makes a nondeterministic choice asks for the
 * next determinant of its kind ({@link #next}); the determinants are used in exactly the order they
 * were logged, so a request for a determinant of another kind than the next one means the task did
 * not do what its predecessor did. That, or a log that cannot be decoded, fails the task with a
 * {@link LocalRecoveryImpossibleException}, on which the JobManager rolls back globally: never a
 * silently different result.
 *
 * <p>Network threads report connections and answers; everything else runs on the task thread.
 */
@Internal
public final class CausalRecovery {

    private static final Logger LOG = LoggerFactory.getLogger(CausalRecovery.class);

    private final String taskName;
    private final CausalLogId logId;
    private final long restoredEpoch;
    private final int consumers;
    private final long deadlineNanos;

    /** Wakes the task when a deadline passes; null for a task that does not recover. */
    @Nullable private final RecoveryDeadlines deadlines;

    private final long timeoutNanos;

    /** When the replay last moved on; a replay stuck for the timeout falls back. */
    private volatile long progressNanos;

    @GuardedBy("this")
    private boolean watchScheduled;

    @GuardedBy("this")
    private final BitSet connected = new BitSet();

    @GuardedBy("this")
    private final List<Answer> answers = new ArrayList<>();

    @GuardedBy("this")
    private final BitSet answered = new BitSet();

    private volatile RecoveryState state;

    @GuardedBy("this")
    private final List<Runnable> whenRunning = new ArrayList<>();

    @GuardedBy("this")
    @Nullable
    private CompletableFuture<Void> stateChanged;

    /**
     * What a transition must signal: futures to complete and actions to run. They run after the
     * monitor is released, because completing an availability future runs the input gate's
     * callbacks, which take the gate's locks; under this monitor that deadlocks with a task thread
     * that holds a gate lock and asks {@link #changed()}.
     */
    @GuardedBy("this")
    private final List<Runnable> signals = new ArrayList<>();

    /**
     * The determinants to replay and how far the replay got; task thread only once REPLAYING.
     * {@code null} when the task cannot replay ({@link #impossible}).
     */
    @Nullable private ReplayCursor replay;

    /** Why the task cannot be recovered by determinants, when its consumers' answers say so. */
    @Nullable private volatile String impossible;

    /** Whether the task recovers by determinants (it had some to replay). */
    private volatile boolean replaysDeterminants;

    private long replayedDeterminants;

    /** When the replay began, for the log line that says how long it took. */
    private long replayStartedNanos;

    /** The determinant replayed last, for the diagnosis of a stalled replay. */
    @Nullable private volatile Determinant lastReplayed;

    private CausalRecovery(
            String taskName,
            CausalLogId logId,
            long restoredEpoch,
            int consumers,
            Duration timeout,
            @Nullable RecoveryDeadlines deadlines,
            RecoveryState initial) {
        this.taskName = taskName;
        this.logId = logId;
        this.restoredEpoch = restoredEpoch;
        this.consumers = consumers;
        this.deadlineNanos = System.nanoTime() + timeout.toNanos();
        this.timeoutNanos = timeout.toNanos();
        this.deadlines = deadlines;
        this.state = initial;
        this.replay = new ReplayCursor(new TreeMap<>(), restoredEpoch);
    }

    /** A task that starts fresh: nothing to replay. */
    public static CausalRecovery notRecovering(String taskName, CausalLogId logId) {
        return new CausalRecovery(
                taskName, logId, 0, 0, Duration.ZERO, null, RecoveryState.RUNNING);
    }

    /**
     * A new attempt of a task restored from epoch {@code restoredEpoch}, whose output has {@code
     * consumers} subpartitions; it waits at most {@code timeout} for their answers, and {@code
     * deadlines} wakes it when the time is up.
     */
    public static CausalRecovery recovering(
            String taskName,
            CausalLogId logId,
            long restoredEpoch,
            int consumers,
            Duration timeout,
            RecoveryDeadlines deadlines) {
        CausalRecovery recovery =
                new CausalRecovery(
                        taskName,
                        logId,
                        restoredEpoch,
                        consumers,
                        timeout,
                        deadlines,
                        RecoveryState.WAITING_FOR_CONNECTIONS);
        if (consumers == 0) {
            // a sink: nobody downstream holds its determinants; it replays its input in any order
            recovery.state = RecoveryState.RUNNING;
        }
        return recovery;
    }

    public RecoveryState state() {
        return state;
    }

    public boolean isRunning() {
        return state == RecoveryState.RUNNING;
    }

    public boolean isReplaying() {
        return state == RecoveryState.REPLAYING;
    }

    /** Whether the task must not process anything yet. */
    public boolean isWaiting() {
        RecoveryState current = state;
        return current == RecoveryState.WAITING_FOR_CONNECTIONS
                || current == RecoveryState.WAITING_FOR_DETERMINANTS;
    }

    public long restoredEpoch() {
        return restoredEpoch;
    }

    /** Whether the task recovers, or recovered, by its predecessor's determinants. */
    public boolean replaysDeterminants() {
        return replaysDeterminants;
    }

    // ------------------------------------------------------------------------------------------
    //  Waiting (network threads)
    // ------------------------------------------------------------------------------------------

    /**
     * A consumer connected to subpartition {@code index} (a flat index over the task's outputs).
     */
    public void consumerConnected(int index) {
        synchronized (this) {
            connected.set(index);
            if (state == RecoveryState.WAITING_FOR_CONNECTIONS
                    && connected.cardinality() >= consumers) {
                transition(RecoveryState.WAITING_FOR_DETERMINANTS);
            }
        }
        signal();
    }

    /**
     * A consumer's answer. When the task recovers with it, {@code onAccepted} runs before the task
     * may replay (it makes the producer skip what that consumer already has).
     *
     * @return whether the answer was accepted
     */
    public boolean determinantsReceived(int index, List<SharedDelta> deltas, Runnable onAccepted) {
        boolean accepted;
        synchronized (this) {
            accepted = accept(index, deltas, onAccepted);
        }
        signal();
        return accepted;
    }

    @GuardedBy("this")
    private boolean accept(int index, List<SharedDelta> deltas, Runnable onAccepted) {
        if (!isWaiting() || answered.get(index)) {
            return false;
        }
        onAccepted.run();
        answered.set(index);
        List<CausalLogDelta> own = new ArrayList<>();
        for (SharedDelta shared : deltas) {
            if (shared.delta().log().equals(logId)) {
                own.add(shared.delta());
            }
        }
        answers.add(new Answer(index, own));
        connected.set(index);
        if (answered.cardinality() >= consumers) {
            startReplay();
        } else if (state == RecoveryState.WAITING_FOR_CONNECTIONS
                && connected.cardinality() >= consumers) {
            transition(RecoveryState.WAITING_FOR_DETERMINANTS);
        }
        return true;
    }

    @GuardedBy("this")
    private void startReplay() {
        CausalLog merged = new CausalLog();
        TreeMap<Long, List<Determinant>> determinants = new TreeMap<>();
        try {
            for (Answer answer : answers) {
                for (CausalLogDelta delta : answer.deltas) {
                    if (delta.log().equals(logId) && delta.epoch() >= restoredEpoch) {
                        merged.merge(delta);
                    }
                }
            }
            for (CausalLogDelta epoch : merged.deltasFrom(logId, restoredEpoch)) {
                List<Determinant> decoded = DeterminantEncoding.decode(epoch.bytes());
                if (decoded.stream().anyMatch(d -> d instanceof Determinant.Overflow)) {
                    replay = null;
                    impossible =
                            "its causal log of epoch "
                                    + epoch.epoch()
                                    + " is incomplete: it, or a consumer's copy of it, outgrew clonos.determinant.memory";
                    LOG.warn("{}: {}; falling back to a global rollback.", taskName, impossible);
                    transition(RecoveryState.REPLAYING);
                    return;
                }
                determinants.put(epoch.epoch(), decoded);
            }
            replay = new ReplayCursor(determinants, restoredEpoch);
        } catch (CorruptCausalLogException e) {
            replay = null;
            LOG.warn(
                    "{}: the determinants its consumers hold do not agree or cannot be read.",
                    taskName,
                    e);
            transition(RecoveryState.REPLAYING);
            return;
        }
        int count = determinants.values().stream().mapToInt(List::size).sum();
        // No determinants is no orphan: the JobManager recovers a task locally only where every
        // choice of it that reached a surviving task is held by one (ConnectedFailures), so a
        // task whose consumers hold none of its epochs made no choice anybody depends on.
        replaysDeterminants = count > 0;
        LOG.info(
                "{}: recovering from epoch {} with {} determinants from {} consumers.",
                taskName,
                restoredEpoch,
                count,
                answers.size());
        LOG.debug("{}: the determinants to replay, per epoch: {}", taskName, determinants);
        answers.clear();
        transition(count == 0 ? RecoveryState.RUNNING : RecoveryState.REPLAYING);
    }

    @GuardedBy("this")
    private void transition(RecoveryState next) {
        if (!state.canBecome(next)) {
            throw new IllegalStateException(
                    taskName + ": the recovery cannot go from " + state + " to " + next);
        }
        LOG.debug("{}: recovery {} -> {}", taskName, state, next);
        state = next;
        progressNanos = System.nanoTime();
        if (next == RecoveryState.REPLAYING) {
            replayStartedNanos = progressNanos;
        }
        if (next == RecoveryState.RUNNING) {
            signals.addAll(whenRunning);
            whenRunning.clear();
        }
        if (stateChanged != null) {
            CompletableFuture<Void> changed = stateChanged;
            signals.add(() -> changed.complete(null));
            stateChanged = null;
        }
    }

    /** Runs what the last transitions must signal, outside the monitor. */
    private void signal() {
        List<Runnable> due;
        synchronized (this) {
            if (signals.isEmpty()) {
                return;
            }
            due = new ArrayList<>(signals);
            signals.clear();
        }
        due.forEach(Runnable::run);
    }

    /** Runs {@code action} once the task runs normally: now, or at the end of its recovery. */
    public void whenRunning(Runnable action) {
        synchronized (this) {
            if (state != RecoveryState.RUNNING) {
                whenRunning.add(action);
                return;
            }
        }
        action.run();
    }

    /** Completes when the state changes or the replay moves on; for input availability. */
    public synchronized CompletableFuture<Void> changed() {
        if (stateChanged == null) {
            stateChanged = new CompletableFuture<>();
        }
        if (state != RecoveryState.RUNNING
                && timeoutNanos > 0
                && deadlines != null
                && !watchScheduled) {
            watchScheduled = true;
            long deadline = isWaiting() ? deadlineNanos : progressNanos + timeoutNanos;
            deadlines.wakeAfter(
                    Math.max(0, deadline - System.nanoTime()) + 1_000_000,
                    TimeUnit.NANOSECONDS,
                    this::wake);
        }
        return stateChanged;
    }

    private void wake() {
        synchronized (this) {
            watchScheduled = false;
        }
        signalChanged();
    }

    /** Completes the future of {@link #changed()}, outside the monitor; the replay moved on. */
    public void signalChanged() {
        CompletableFuture<Void> waiting;
        synchronized (this) {
            waiting = stateChanged;
            stateChanged = null;
        }
        if (waiting != null) {
            waiting.complete(null);
        }
    }

    /** Fails the task when its consumers did not answer in time. Task thread. */
    public void checkDeadline() {
        if (state == RecoveryState.RUNNING) {
            // runs before every buffer the task reads
            return;
        }
        if (state == RecoveryState.REPLAYING
                && replay != null
                && System.nanoTime() - progressNanos - timeoutNanos > 0) {
            throw diverged(
                    String.format(
                            "its replay made no progress for %d ms (clonos.recovery.reconnect-timeout);"
                                    + " at %s (%d replayed in all)",
                            TimeUnit.NANOSECONDS.toMillis(timeoutNanos),
                            position(),
                            replayedDeterminants));
        }
        if (isWaiting() && System.nanoTime() - deadlineNanos > 0) {
            int connections;
            int answers;
            synchronized (this) {
                connections = connected.cardinality();
                answers = answered.cardinality();
            }
            throw new LocalRecoveryImpossibleException(
                    String.format(
                            "%s waited in vain for its consumers' determinants (%d of %d connected,"
                                    + " %d answered; clonos.recovery.reconnect-timeout)",
                            taskName, connections, consumers, answers));
        }
    }

    // ------------------------------------------------------------------------------------------
    //  Replaying (task thread)
    // ------------------------------------------------------------------------------------------

    /**
     * The next determinant to replay, if it is of the given kind and satisfies the condition;
     * {@code null} when it is not (the caller's event comes later), or when the task runs normally.
     */
    @Nullable
    public <D extends Determinant> D peek(Class<D> kind) {
        if (state != RecoveryState.REPLAYING) {
            return null;
        }
        Determinant next = head();
        return kind.isInstance(next) ? kind.cast(next) : null;
    }

    /**
     * Takes the next determinant, which must be of the given kind; {@code null} when the task runs
     * normally (the replay ended), so the caller makes a fresh choice. The first tick of a logged
     * run is the run ({@link ReplayCursor}); see {@link #continuesRun}.
     */
    @Nullable
    public <D extends Determinant> D next(Class<D> kind) {
        if (state != RecoveryState.REPLAYING) {
            return null;
        }
        Determinant next = head();
        if (next == null) {
            throw diverged(
                    "the task asked for "
                            + kind.getSimpleName()
                            + " after its predecessor's determinants of epoch "
                            + replay.epoch()
                            + " were used up");
        }
        if (!kind.isInstance(next)) {
            throw diverged(
                    "the task asked for "
                            + kind.getSimpleName()
                            + " where its predecessor logged "
                            + next
                            + " ("
                            + replay.position()
                            + ")");
        }
        lastReplayed = next;
        progressNanos = System.nanoTime();
        replay.advance();
        replayedDeterminants++;
        finishIfDone();
        signalChanged();
        return kind.cast(next);
    }

    /**
     * Whether the next tick of the task's clock belongs to a logged run the replay handed out
     * already, and so is in the task's log already (task thread).
     */
    public boolean continuesRun() {
        return state == RecoveryState.REPLAYING && replay != null && replay.continuesRun();
    }

    /**
     * The task entered epoch {@code epoch}, i.e. took a checkpoint where its predecessor took one:
     * every determinant of the previous epoch must have been used.
     */
    public void epochStarted(long epoch) {
        if (state != RecoveryState.REPLAYING) {
            return;
        }
        int unused = head() == null ? 0 : replay.unusedInEpoch();
        if (unused > 0) {
            throw diverged(
                    "it took checkpoint %d with %d determinants of epoch %d unused (at %s)"
                            .formatted(epoch, unused, replay.epoch(), replay.position()));
        }
        replay.startEpoch(epoch);
        finishIfDone();
    }

    /**
     * The last epoch the replay has determinants of (task thread, while replaying): the
     * predecessor's consumers saw nothing of a later one, so a barrier of a later checkpoint (one
     * triggered during the recovery) has no place in the replay.
     */
    public long lastReplayedEpoch() {
        return replay == null ? restoredEpoch : replay.lastEpoch();
    }

    public long replayedDeterminants() {
        return replayedDeterminants;
    }

    @Nullable
    private Determinant head() {
        if (replay == null) {
            throw diverged(
                    impossible != null
                            ? impossible
                            : "its consumers' determinants do not agree or cannot be read");
        }
        return replay.head();
    }

    /** The replay ends when the last logged epoch is used up. */
    private void finishIfDone() {
        if (replay.usedUp()) {
            LOG.info(
                    "{}: replayed {} determinants in {} ms; running normally.",
                    taskName,
                    replayedDeterminants,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - replayStartedNanos));
            replay = new ReplayCursor(new TreeMap<>(), replay.epoch());
            synchronized (this) {
                transition(RecoveryState.RUNNING);
            }
            signal();
        }
    }

    /** Where the replay is, for a divergence's diagnosis. */
    public String position() {
        return replay == null ? "no determinants left" : replay.position();
    }

    private LocalRecoveryImpossibleException diverged(String why) {
        return new LocalRecoveryImpossibleException(
                taskName + " cannot reproduce its predecessor: " + why);
    }

    private record Answer(int index, List<CausalLogDelta> deltas) {}

    @Override
    public String toString() {
        return String.format(
                "CausalRecovery{%s, %s, restored=%d, consumers=%d}",
                taskName, state, restoredEpoch, consumers);
    }

    /** For tests: the determinants still to replay, per epoch. */
    synchronized Map<Long, Integer> remaining() {
        return replay.remaining();
    }
}
