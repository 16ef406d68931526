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
import org.apache.flink.util.function.ThrowingRunnable;

import javax.annotation.Nullable;

import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The causal side of one running task, shared by the parts of the task that make nondeterministic
 * choices: its input gates (order), its timer services (timer firings, processing time), the causal
 * services of its user functions (time, random numbers, external results) and its output
 * subpartitions (which piggyback the log). Each choice goes through {@link #decide}: while the task
 * replays, the choice is the logged one; otherwise it is made fresh. Either way it is logged, so a
 * recovered task rebuilds the log its predecessor had.
 *
 * <p>Everything except the log's readers runs on the task thread. Choices made before the task
 * processes anything (while operators open and restore) are not logged: a recovered task repeats
 * them from its restored state.
 */
@Internal
public final class CausalTask {

    private final TaskCausalLog log;
    private final CausalRecovery recovery;
    private final int inputChannels;
    private final long timeServiceGranularityMillis;
    private final DeterminantSharing sharing;
    private final HeldCausalLogs held;

    /**
     * The index, after the task's consumer subpartitions, under which a sink of the task that
     * stores determinants beside its output answers; -1 for a task without one.
     */
    private volatile int externalHolder = -1;

    /** Upstream logs this recovering task was handed back by its consumers. */
    private final Set<CausalLogId> handedBack = ConcurrentHashMap.newKeySet();

    private static final ThreadLocal<CausalTask> ON_TASK_THREAD = new ThreadLocal<>();

    private volatile boolean processing;

    /** Set while the task thread runs code whose choices a replay never makes again. */
    private boolean outsideTheLog;

    /** The checkpoint the task took last, and whether it is still pending. */
    private final PendingCheckpoint pending;

    @Nullable private volatile Thread taskThread;

    /**
     * The thread of a legacy source's function, which emits the task's elements holding the
     * checkpoint lock, as the task thread runs its mailbox actions: its choices are the task's too.
     */
    @Nullable private volatile Thread sourceThread;

    private volatile Consumer<Throwable> failure = t -> {};
    private long elementsInEpoch;

    /** The task's clock, and whether it ticked for the current element. */
    private long clockMillis;

    private boolean ticked;

    /** What user code's own random calls draw from, from their first on (task thread). */
    @Nullable private EpochRandom userCodeRandom;

    private final AsyncResults asyncResults;
    private volatile BooleanSupplier regeneratesPredecessorStream = () -> false;

    /** Latched once the regenerated output passed what consumers received (task thread). */
    private boolean regenerated;

    /** What each input last handed its operators (task thread). */
    private final CausalWatermarks watermarks = new CausalWatermarks(this);

    /** The predecessor's mailbox actions, at their places in a replay (task thread). */
    private final MailboxActionReplay mailboxActions;

    public CausalTask(
            TaskCausalLog log,
            CausalRecovery recovery,
            int inputChannels,
            long timeServiceGranularityMillis,
            int sharingDepth) {
        this(
                log,
                new HeldCausalLogs(),
                recovery,
                inputChannels,
                timeServiceGranularityMillis,
                new DeterminantSharing(sharingDepth, false));
    }

    /** A task whose own log and held logs share one {@link DeterminantMemory}. */
    public CausalTask(
            TaskCausalLog log,
            HeldCausalLogs held,
            CausalRecovery recovery,
            int inputChannels,
            long timeServiceGranularityMillis,
            int sharingDepth) {
        this(
                log,
                held,
                recovery,
                inputChannels,
                timeServiceGranularityMillis,
                new DeterminantSharing(sharingDepth, false));
    }

    /** A task whose own log and held logs share one {@link DeterminantMemory}. */
    public CausalTask(
            TaskCausalLog log,
            HeldCausalLogs held,
            CausalRecovery recovery,
            int inputChannels,
            long timeServiceGranularityMillis,
            DeterminantSharing sharing) {
        this.held = held;
        this.sharing = sharing;
        this.log = log;
        this.recovery = recovery;
        this.inputChannels = inputChannels;
        this.timeServiceGranularityMillis = timeServiceGranularityMillis;
        this.pending = new PendingCheckpoint(log.currentEpoch());
        this.asyncResults = new AsyncResults(log, recovery);
        this.mailboxActions =
                new MailboxActionReplay(this, recovery, log, asyncResults, watermarks);
        log.memory().setWaitCondition(this::mayWaitForMemory);
    }

    // ------------------------------------------------------------------------------------------
    //  Backpressure: a full determinant memory waits for the checkpoint the task took last
    // ------------------------------------------------------------------------------------------

    /**
     * Whether the task thread may wait for memory now: it runs normally and took a checkpoint that
     * is still pending ({@link PendingCheckpoint}). Reads volatile fields only: it is asked while
     * other threads release memory. A legacy source's thread never waits: it holds the checkpoint
     * lock, which the checkpoint's completion needs.
     */
    private boolean mayWaitForMemory() {
        return isProcessing()
                && Thread.currentThread() == taskThread
                && recovery.isRunning()
                && pending.isPending();
    }

    /** This attempt is not the task's first ({@link PendingCheckpoint}). */
    public void replacedAFailedAttempt() {
        pending.replacedAFailedAttempt();
    }

    /** Checkpoint {@code checkpointId} completed and its truncations are done. */
    public void checkpointCompleted(long checkpointId) {
        pending.completed(checkpointId);
        log.memory().wakeWaiters();
    }

    /** Checkpoint {@code checkpointId} was aborted: waiting for it would not free memory. */
    public void checkpointAborted(long checkpointId) {
        pending.aborted(checkpointId);
        log.memory().wakeWaiters();
    }

    /** The logs of upstream tasks this task holds. */
    public HeldCausalLogs held() {
        return held;
    }

    /**
     * A consumer's answer while this task recovers: the task's own determinants go to the recovery,
     * the logs of its upstream tasks are held, one hop closer to their owners, for the task's own
     * answers to its producers.
     */
    public boolean answered(int consumer, List<SharedDelta> deltas, Runnable onAccepted)
            throws CorruptCausalLogException {
        for (SharedDelta shared : deltas) {
            CausalLogId owner = shared.delta().log();
            int distance = sharing.handedBackDistance(shared.distance());
            if (!owner.equals(log.id()) && distance >= 0) {
                held.merge(new SharedDelta(shared.delta(), distance));
                handedBack.add(owner);
            }
        }
        return recovery.determinantsReceived(consumer, deltas, onAccepted);
    }

    /**
     * The task has a sink that stores the task's determinants beside its output; its recovery
     * counts that sink, under {@code index}, among the consumers it waits for.
     */
    public void setExternalHolder(int index) {
        this.externalHolder = index;
    }

    /** Whether a sink of the task stores its determinants beside its output. */
    public boolean hasExternalHolder() {
        return externalHolder >= 0;
    }

    /**
     * The answer of the task's sink that stores determinants beside its output: what it read back
     * of its predecessor's, as a consumer answers ({@link #answered}). Ignored when the task does
     * not recover.
     *
     * @return whether the recovery took it
     */
    public boolean answeredByExternalHolder(List<SharedDelta> deltas)
            throws CorruptCausalLogException {
        if (externalHolder < 0) {
            throw new IllegalStateException("The task has no sink that holds its determinants");
        }
        return answered(externalHolder, deltas, () -> {});
    }

    /** Upstream logs handed back by consumers during this task's recovery. */
    public Set<CausalLogId> handedBack() {
        return handedBack;
    }

    /** {@code clonos.determinant-sharing-depth}: how far logs travel; negative for any. */
    public int sharingDepth() {
        return sharing.depth();
    }

    /** How far the task's logs and those it holds travel downstream. */
    public DeterminantSharing sharing() {
        return sharing;
    }

    /** {@code clonos.time-service.granularity} of the job, for the causal time service. */
    public long timeServiceGranularityMillis() {
        return timeServiceGranularityMillis;
    }

    public TaskCausalLog log() {
        return log;
    }

    public CausalRecovery recovery() {
        return recovery;
    }

    /** Whether the order of the task's input needs determinants: it has more than one channel. */
    public boolean logsInputOrder() {
        return inputChannels > 1;
    }

    /** How to fail the task from another thread (Flink's external failure of the task). */
    public void setFailureHandler(Consumer<Throwable> failure) {
        this.failure = failure;
    }

    /** Fails the task from any thread. */
    public void fail(Throwable cause) {
        failure.accept(cause);
    }

    public void setTimerReplayer(TimerReplayer timers) {
        mailboxActions.setTimerReplayer(timers);
    }

    /**
     * Whether the task's output still regenerates its predecessor's stream: what its consumers
     * received from the predecessor, or what a recovering consumer replays.
     */
    public void setRegeneratesPredecessorStream(BooleanSupplier regenerates) {
        this.regeneratesPredecessorStream = regenerates;
    }

    /**
     * Whether the task may make a choice of its own that would change its output (fire a timer,
     * hand on a watermark of its own): it runs normally, and its output no longer regenerates what
     * its consumers received from its predecessor, or what a recovering consumer replays. Every
     * choice the predecessor made before output a consumer received (or read, and logged that it
     * did) is in the log; so past the log's end, up to the end of that output, the predecessor made
     * none, and neither may its successor (its timers are overdue after the failure and would fire
     * at once). Task thread.
     */
    public boolean choosesFreely() {
        if (!recovery.isRunning()) {
            return false;
        }
        if (!regenerated) {
            if (regeneratesPredecessorStream.getAsBoolean()) {
                return false;
            }
            regenerated = true;
        }
        return true;
    }

    public void setCheckpointReplayer(CheckpointReplayer checkpoints) {
        mailboxActions.setCheckpointReplayer(checkpoints);
    }

    /** What the task's inputs hand its operators, logged and replayed. */
    public CausalWatermarks watermarks() {
        return watermarks;
    }

    /** The elements (and mailbox actions) the task processed in the current epoch. */
    long elementsInEpoch() {
        return elementsInEpoch;
    }

    /** A mailbox action runs: the next reading of the time is a tick of its own. */
    void newTick() {
        ticked = false;
    }

    /** The task starts processing: from now on its choices are logged and replayed. */
    public void processingStarted() {
        if (!processing) {
            taskThread = Thread.currentThread();
            ON_TASK_THREAD.set(this);
            processing = true;
        }
    }

    /**
     * The calling thread is a legacy source's, which emits the task's elements under the checkpoint
     * lock, as the task thread runs its mailbox actions: from now on its choices (the chain's time
     * readings, its watermarks) are logged and replayed like the task thread's, in lock order.
     */
    public void onSourceThread() {
        Thread current = Thread.currentThread();
        if (sourceThread != current) {
            sourceThread = current;
            ON_TASK_THREAD.set(this);
        }
    }

    /**
     * The causal side of the task whose thread calls, once it processes; for code that Flink
     * creates without a way to reach its task (a record writer's partitioner).
     */
    @Nullable
    public static CausalTask ofCurrentThread() {
        return ON_TASK_THREAD.get();
    }

    /**
     * Whether choices made now are the task's: it processes, and the caller is the task thread (or
     * a legacy source's thread, {@link #onSourceThread}). A choice made on another thread (a
     * flusher, a checkpoint thread, a user's own thread) has no place in the main thread's order;
     * logging it, or replaying a determinant for it, would put the replay out of step, so it is
     * neither.
     */
    public boolean isProcessing() {
        Thread current = Thread.currentThread();
        return processing && !outsideTheLog && (current == taskThread || current == sourceThread);
    }

    /**
     * Runs code on the task thread whose choices are not the task's to log: a replay never runs it
     * (an async operator's call of its user function, whose result is logged where it takes
     * effect), so a choice logged there would be a determinant no replay asks for.
     */
    public <E extends Throwable> void outsideTheLog(ThrowingRunnable<E> code) throws E {
        boolean outer = outsideTheLog;
        outsideTheLog = true;
        try {
            code.run();
        } finally {
            outsideTheLog = outer;
        }
    }

    /**
     * One nondeterministic choice: the logged one while replaying, a fresh one otherwise; logged. A
     * replayed run ({@link Determinant.Run}) is logged whole, as its predecessor logged it, where
     * its first one is decided; the choice is then the run.
     */
    public <D extends Determinant> D decide(Class<D> kind, Supplier<D> fresh) {
        if (!isProcessing()) {
            return fresh.get();
        }
        boolean logged = recovery.continuesRun();
        D replayed = recovery.next(kind);
        D decided = replayed != null ? replayed : fresh.get();
        if (replayed == null) {
            log.appendFresh(decided);
        } else if (!logged) {
            log.append(replayed);
        }
        return decided;
    }

    // ------------------------------------------------------------------------------------------
    //  The task's clock: one logged tick per element (or timer) that reads the time
    // ------------------------------------------------------------------------------------------

    /**
     * A reading of processing or wall-clock time. On the task thread, the first reading while the
     * task processes an element (or fires a timer, or before the first element of an epoch) is a
     * logged tick, and every later reading until the next element returns it. How often code reads
     * the time is then no determinant, only whether it reads it at all: code that reads it lazily
     * once (a window assigner's stagger, a cache) does so at another point after a restore.
     *
     * <p>A tick is pinned to its element, so a consumer that holds any output of the element holds
     * the tick too: it is logged before the output leaves the task.
     */
    public long timestamp(LongSupplier clock) {
        if (!isProcessing()) {
            return clock.getAsLong();
        }
        if (!ticked) {
            clockMillis = tick(clock).millis();
            ticked = true;
        }
        return clockMillis;
    }

    /**
     * A reading by user code's own clock calls ({@code CausalCalls}): the element's tick first, as
     * {@link #timestamp}; each further one a logged tick of its own, so that a wait for the clock
     * to move ends, in a replay as in the run it replays.
     */
    public long freshTimestamp(LongSupplier clock) {
        if (!isProcessing()) {
            return clock.getAsLong();
        }
        if (ticked) {
            clockMillis = tick(clock).millis();
            return clockMillis;
        }
        return timestamp(clock);
    }

    /**
     * What user code's own random calls ({@code Math.random()}, {@code ThreadLocalRandom}, {@code
     * UUID.randomUUID()}) draw from: seeded and logged once per epoch ({@link EpochRandom}).
     */
    public Random userCodeRandom() {
        if (userCodeRandom == null) {
            userCodeRandom = new EpochRandom(this);
        }
        return userCodeRandom;
    }

    /** The tick at this element: the predecessor's while replaying, else a fresh one. */
    private Determinant.Timestamp tick(LongSupplier clock) {
        Determinant.Timestamp tick =
                decide(
                        Determinant.Timestamp.class,
                        () ->
                                new Determinant.Timestamp(
                                        elementsInEpoch, Math.max(clockMillis, clock.getAsLong())));
        if (tick.recordCount() != elementsInEpoch) {
            throw new LocalRecoveryImpossibleException(
                    "The recovered task reads the time at element %d where its predecessor read it at element %d (%s)"
                            .formatted(elementsInEpoch, tick.recordCount(), recovery.position()));
        }
        return tick;
    }

    /**
     * Logs a choice that was made outside of {@link #decide} (the input order of a running task).
     */
    public void logged(Determinant determinant) {
        if (isProcessing()) {
            log.appendFresh(determinant);
        }
    }

    // ------------------------------------------------------------------------------------------
    //  Timers: a firing is pinned to the number of stream elements the task processed before it
    // ------------------------------------------------------------------------------------------

    /** The task is about to process its next stream element (record, watermark, ...). */
    public void beforeElement() {
        if (recovery.isReplaying()) {
            fireDueTimers();
        }
        countElement();
    }

    /**
     * An element the replay itself hands on (a source's logged watermark): counted, nothing fired.
     */
    public void countElement() {
        elementsInEpoch++;
        ticked = false;
    }

    /**
     * While replaying, fires the timers, checkpoints and async results its predecessor had at this
     * point: after as many elements of the epoch as the task has processed now.
     */
    public void fireDueTimers() {
        if (!recovery.isReplaying()) {
            // runs before every buffer: a task that runs normally has nothing logged to fire
            return;
        }
        mailboxActions.fireDue();
    }

    /**
     * While replaying, fires the next timer, checkpoint or async result its predecessor had at this
     * point, if one is due; for code that waited in its predecessor until a mailbox action freed it
     * (an async operator at capacity), and must now wait for exactly the logged ones.
     */
    public boolean fireNextDue() {
        return mailboxActions.fireNextDue();
    }

    /**
     * Whether a logged mailbox action (timer, checkpoint, async result) is due now (the task should
     * poll its input to fire it).
     */
    public boolean timerDue() {
        return mailboxActions.isAnyDue();
    }

    /**
     * A source takes checkpoint {@code checkpointId} now (task thread, before its barrier): the
     * position of the barrier among its records is a determinant. The epoch starts once the
     * checkpoint is taken ({@link #epochStarted}).
     */
    public void sourceCheckpoint(long checkpointId, long timestamp) {
        logged(new Determinant.SourceCheckpoint(elementsInEpoch, checkpointId, timestamp));
        // what the chain reads while it takes the checkpoint is logged after the barrier's place
        ticked = false;
    }

    /** A timer fires in a task that runs normally: log it before its callback runs. */
    public void timerFiring(int timerId, long timestamp) {
        if (isProcessing()) {
            log.append(new Determinant.TimerFired(elementsInEpoch, timerId, timestamp));
            // a timer's callback sees the time it fires at
            ticked = false;
        }
    }

    // ------------------------------------------------------------------------------------------
    //  Async results: the point at which a result takes effect, and the result, are determinants
    // ------------------------------------------------------------------------------------------

    /**
     * Registers an operator whose asynchronous results a replay hands back; returns the id its
     * results are logged under. Operators register in the same order in every attempt.
     */
    public int registerAsyncOperator(AsyncCompletionReplayer operator) {
        return asyncResults.register(operator);
    }

    /**
     * An async result takes effect now (task thread, running normally): log where, and what, before
     * the operator applies it.
     */
    public void asyncCompleted(int callbackId, long entry, byte[] result) {
        processingStarted();
        if (isProcessing()) {
            asyncResults.completed(elementsInEpoch, callbackId, entry, result);
            ticked = false;
        }
    }

    /** The task took checkpoint {@code epoch}. */
    public void epochStarted(long epoch) {
        pending.taken(epoch);
        log.startEpoch(epoch);
        recovery.epochStarted(epoch);
        elementsInEpoch = 0;
        // the epoch's first reading is logged in it: a task recovering from its checkpoint starts
        // there
        ticked = false;
        watermarks.logAtEpochStart();
    }
}
