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

import io.clonos.runtime.causal.LocalRecoveryImpossibleException;
import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.configuration.ClonosOptions.DeterminantSharingHops;
import io.clonos.runtime.configuration.ClonosOptions.InFlightLogType;
import io.clonos.runtime.configuration.ClonosOptions.OrphanFallback;
import io.clonos.runtime.configuration.ClonosOptions.RecoveryMode;
import io.clonos.runtime.configuration.TaskSettings;
import io.clonos.runtime.jobgraph.VertexReplay;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.io.network.partition.PartitionNotFoundException;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.util.ExceptionUtils;

import javax.annotation.Nullable;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Which failures Clonos recovers locally, and why not the others; the scheduler only carries the
 * decisions out. Kept apart from it so that every rule can be tested without a running job, and so
 * that the reasons the log gives are the rules themselves.
 *
 * <p>Two questions. For one failed task, as soon as it fails: can any local recovery cover it (the
 * job's mode, the job's state, the cause of the failure, the kind of task)? For a batch of tasks
 * down together, before they are restarted: does a survivor depend on choices of theirs that nobody
 * holds ({@link ConnectedFailures})? The tasks down together are the batch and the tasks of earlier
 * local recoveries that may still wait for their determinants: those whose restored checkpoint is
 * not older than the latest completed one, which they took part in.
 *
 * @param <V> how the graph names a task
 */
@Internal
final class LocalFailoverPolicy<V> {

    private final ClonosConfiguration clonos;

    /** Locally restarted tasks with the checkpoint they restored, until a later one completes. */
    private final Map<V, Long> stillRecovering = new HashMap<>();

    LocalFailoverPolicy(ClonosConfiguration clonos) {
        this.clonos = clonos;
    }

    /**
     * Why a failed task of {@code vertex} cannot be recovered locally; empty if it can.
     *
     * @param job the job's state when the failure arrived
     * @param error the failure, null if unknown
     */
    Optional<NotLocal> whyNotLocal(JobStatus job, JobVertex vertex, @Nullable Throwable error) {
        if (clonos.getRecoveryMode() == RecoveryMode.GLOBAL) {
            return Optional.of(new NotLocal(null, "clonos.recovery.mode is global"));
        }
        if (clonos.getInFlightLogType() == InFlightLogType.DISABLED) {
            return Optional.of(new NotLocal(null, "clonos.in-flight-log.type is disabled"));
        }
        if (job != JobStatus.RUNNING) {
            return Optional.of(new NotLocal(null, "the job is " + job));
        }
        if (error != null && LocalRecoveryImpossibleException.isCauseOf(error)) {
            return Optional.of(
                    new NotLocal(
                            GlobalFallbackCounter.Reason.REPLAY_IMPOSSIBLE,
                            "an upstream task cannot replay what the task needs ("
                                    + error.getMessage()
                                    + ")"));
        }
        Optional<String> unlogged = VertexReplay.whyUnlogged(vertex.getConfiguration());
        if (unlogged.isPresent()) {
            // nothing was logged: no fallback, the job is Flink's to recover
            return Optional.of(
                    new NotLocal(null, "Clonos does not cover the job: " + unlogged.get()));
        }
        if (!isClonosTask(vertex)) {
            return Optional.of(
                    new NotLocal(
                            GlobalFallbackCounter.Reason.NOT_REPLAYABLE,
                            "its task "
                                    + vertex.getInvokableClassName()
                                    + " is not a Clonos task"));
        }
        Configuration configuration = vertex.getConfiguration();
        if (TaskSettings.readFrom(configuration).causalLogging()) {
            // with causal logging off (DSD 0) the job asked for at-least-once: such a task restarts
            // alone
            Optional<String> notReplayable = VertexReplay.whyNotReplayable(configuration);
            if (notReplayable.isPresent()) {
                return Optional.of(
                        new NotLocal(
                                GlobalFallbackCounter.Reason.NOT_REPLAYABLE,
                                "it cannot be recovered by determinants: " + notReplayable.get()));
            }
        }
        return Optional.empty();
    }

    /**
     * Why a failure is not recovered locally: the kind of reason, for the {@code globalFallbacks}
     * metric (null where the rollback is no fallback: the job chose global recovery, or it was not
     * running), and the reason in words, for the log.
     */
    record NotLocal(@Nullable GlobalFallbackCounter.Reason reason, String why) {}

    /**
     * Whether a task that cannot be recovered by determinants restarts alone and afresh (at least
     * once) instead of rolling the job back: the job chose {@code clonos.recovery.orphan-fallback:
     * at-least-once} and the task failed because determinants it needs are lost, or because its
     * producer started afresh for that reason. Not when a producer's partition is gone: restarting
     * would not bring its data back.
     */
    boolean restartsAfresh(JobStatus job, JobVertex vertex, @Nullable Throwable error) {
        return clonos.getOrphanFallback() == OrphanFallback.AT_LEAST_ONCE
                && clonos.getRecoveryMode() == RecoveryMode.LOCAL
                && job == JobStatus.RUNNING
                && error != null
                && LocalRecoveryImpossibleException.isCauseOf(error)
                && ExceptionUtils.findThrowable(error, PartitionNotFoundException.class).isEmpty()
                && isClonosTask(vertex);
    }

    /**
     * Whether a rollback is a fallback from local recovery, for the log and the {@code
     * globalFallbacks} metric: not when the job asked for rollbacks, nor when it was not running.
     */
    boolean isFallback(JobStatus job) {
        return clonos.getRecoveryMode() == RecoveryMode.LOCAL && job == JobStatus.RUNNING;
    }

    /**
     * Judges a batch of failed tasks before its restart.
     *
     * @param batch the failed tasks to restart together
     * @param completedCheckpoint the latest completed checkpoint
     * @param primaries every task of the job but the standbys
     * @param consumersOf the tasks that read each task's output
     * @param lostProducer a producer of the task that finished on a TaskManager that is lost
     * @param names a task's name for the log
     */
    BatchVerdict<V> judge(
            Set<V> batch,
            long completedCheckpoint,
            Set<V> primaries,
            Function<V, Collection<V>> consumersOf,
            Function<V, Optional<V>> lostProducer,
            Function<V, String> names) {
        return judge(
                batch,
                completedCheckpoint,
                primaries,
                consumersOf,
                task -> false,
                lostProducer,
                names);
    }

    /**
     * As above; {@code holdsExternally} says whether a task's sink stores the task's determinants
     * beside its output, in a system that survives every failure ({@link ConnectedFailures}).
     */
    BatchVerdict<V> judge(
            Set<V> batch,
            long completedCheckpoint,
            Set<V> primaries,
            Function<V, Collection<V>> consumersOf,
            Predicate<V> holdsExternally,
            Function<V, Optional<V>> lostProducer,
            Function<V, String> names) {
        return judge(
                batch,
                completedCheckpoint,
                primaries,
                consumersOf,
                holdsExternally,
                (producer, consumer) -> false,
                lostProducer,
                names);
    }

    /**
     * As above; {@code sameTaskManager} says whether a producer and its consumer run in one
     * TaskManager (their current attempts, or the failed ones of the batch). With {@code
     * clonos.determinant-sharing-hops: between-taskmanagers} such a hop is free, unless one of the
     * two restarted since the latest completed checkpoint: its earlier attempt may have run
     * elsewhere through the epochs a recovery replays.
     */
    BatchVerdict<V> judge(
            Set<V> batch,
            long completedCheckpoint,
            Set<V> primaries,
            Function<V, Collection<V>> consumersOf,
            Predicate<V> holdsExternally,
            BiPredicate<V, V> sameTaskManager,
            Function<V, Optional<V>> lostProducer,
            Function<V, String> names) {
        stillRecovering.values().removeIf(restoredFrom -> restoredFrom < completedCheckpoint);
        for (V task : batch) {
            Optional<V> producer = lostProducer.apply(task);
            if (producer.isPresent()) {
                // Flink does not run a finished task again, and its output is gone with it
                return BatchVerdict.global(
                        GlobalFallbackCounter.Reason.INPUT_LOST,
                        "the producer finished on a TaskManager that is lost: "
                                + names.apply(producer.get())
                                + " finished, and its in-flight log, from which "
                                + names.apply(task)
                                + " would replay its input, is gone with that TaskManager");
            }
        }
        Set<V> down = new LinkedHashSet<>(batch);
        down.addAll(stillRecovering.keySet());
        boolean everyHopCounts =
                clonos.getDeterminantSharingHops() == DeterminantSharingHops.EVERY_TASK;
        // a task restarted since the latest completed checkpoint may have moved meanwhile
        Set<V> moved = new HashSet<>(stillRecovering.keySet());
        BiPredicate<V, V> freeHop =
                (producer, consumer) ->
                        !everyHopCounts
                                && !moved.contains(producer)
                                && !moved.contains(consumer)
                                && sameTaskManager.test(producer, consumer);
        ConnectedFailures<V> failures =
                new ConnectedFailures<>(consumersOf, holdsExternally, freeHop, down);
        Optional<String> noSurvivor = failures.noSurvivor(primaries);
        if (noSurvivor.isPresent()) {
            return BatchVerdict.global(GlobalFallbackCounter.Reason.NO_SURVIVOR, noSurvivor.get());
        }
        int depth = clonos.getDeterminantSharingDepth();
        Map<V, ConnectedFailures.Orphan<V>> orphans = failures.orphans(depth);
        if (orphans.isEmpty()) {
            return BatchVerdict.local(Set.of());
        }
        String hops = everyHopCounts ? " hops" : " hops between TaskManagers";
        String reasons =
                orphans.entrySet().stream()
                        .map(
                                orphan ->
                                        names.apply(orphan.getKey())
                                                + " is an orphan: its output reached "
                                                + names.apply(orphan.getValue().survivor())
                                                + ", which kept running, "
                                                + orphan.getValue().hops()
                                                + hops
                                                + " downstream through failed tasks, and clonos.determinant-sharing-depth "
                                                + depth
                                                + " shares its determinants "
                                                + depth
                                                + hops)
                        .collect(Collectors.joining("; "));
        if (clonos.getOrphanFallback() == OrphanFallback.AT_LEAST_ONCE) {
            return new BatchVerdict<>(null, null, new LinkedHashSet<>(orphans.keySet()), reasons);
        }
        return new BatchVerdict<>(
                GlobalFallbackCounter.Reason.BEYOND_DSD, reasons, Set.of(), reasons);
    }

    /**
     * Whether {@code task} fails again before a checkpoint completed since its last local restart
     * (the latest completed one is {@code completedCheckpoint}): a repeated failure, for which the
     * restart backs off ({@code clonos.recovery.restart-delay}).
     */
    boolean failsAgainBeforeACheckpoint(V task, long completedCheckpoint) {
        Long restoredFrom = stillRecovering.get(task);
        return restoredFrom != null && restoredFrom >= completedCheckpoint;
    }

    /** The tasks of a batch were restarted locally from {@code checkpoint}. */
    void restarted(Collection<V> tasks, long checkpoint) {
        for (V task : tasks) {
            stillRecovering.put(task, checkpoint);
        }
    }

    /** For tests: the tasks counted as still recovering. */
    Set<V> stillRecovering() {
        return new HashSet<>(stillRecovering.keySet());
    }

    private static boolean isClonosTask(JobVertex vertex) {
        String invokable = vertex.getInvokableClassName();
        return invokable != null && invokable.startsWith("io.clonos.");
    }

    /**
     * The verdict on a batch: local, possibly with orphans that restart afresh (at least once;
     * those of earlier batches are restarted again with this one), or a global rollback and why;
     * {@code orphans} names the orphans, if the verdict found any, and why they are.
     */
    record BatchVerdict<V>(
            @Nullable GlobalFallbackCounter.Reason fallback,
            @Nullable String notLocal,
            Set<V> restartAfresh,
            @Nullable String orphans) {

        static <V> BatchVerdict<V> local(Set<V> restartAfresh) {
            return new BatchVerdict<>(null, null, restartAfresh, null);
        }

        static <V> BatchVerdict<V> global(GlobalFallbackCounter.Reason fallback, String reason) {
            return new BatchVerdict<>(fallback, reason, Set.of(), null);
        }

        boolean isLocal() {
            return notLocal == null;
        }
    }
}
