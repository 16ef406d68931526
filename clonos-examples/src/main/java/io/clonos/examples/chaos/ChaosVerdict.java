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

package io.clonos.examples.chaos;

import io.clonos.examples.GeneratedJob;
import io.clonos.examples.HashChains;
import io.clonos.examples.Shape;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiPredicate;

/**
 * What a chaos run must show, judged from what a user can read after the job ended: the attempt
 * numbers of its subtasks, its exception history and its committed output.
 *
 * <ul>
 *   <li>Exactly once: no input lost or repeated, no hash chain diverged.
 *   <li>Local: a subtask that did not run on a lost TaskManager keeps attempt 0, and every one that
 *       did restarted; unless the documented fallback holds for the tasks that were down together,
 *       and then the job's exceptions name it (an orphan beyond the determinant sharing depth, or
 *       no task survived).
 *   <li>In time: the job ended within its bound after the last loss.
 * </ul>
 *
 * <p>The fallback condition is computed here from the job's shape, independently of the scheduler:
 * a task down is an orphan when a path from it through tasks down reaches a surviving task in more
 * counted hops than the depth; as the shipped {@code clonos.determinant-sharing-hops} counts them,
 * a hop inside one TaskManager is free. The JobManager counts a hop from or to a task restarted
 * since the latest completed checkpoint, though, and which lost tasks had restarted when it judged
 * the others depends on whether it learnt of several losses in one batch. So a fallback is required
 * only where the losses happened at once and the condition holds with every hop inside a lost
 * TaskManager free; it is allowed where it holds with those hops counted too, unless only one
 * TaskManager was lost.
 */
public final class ChaosVerdict {

    /** Words by which the job's exceptions name the documented fallback. */
    public static final List<String> DOCUMENTED_FALLBACKS =
            List.of("is an orphan", "every task of the job is down");

    /**
     * Words by which the job's exceptions name a documented gap that no shape predicts, as it
     * depends on timing: a consumer that fails after its producer finished cannot be replayed (the
     * finished producer released its partition and in-flight log). A fallback for it is allowed,
     * never required.
     */
    public static final List<String> DOCUMENTED_GAPS = List.of("the producer finished");

    /** How long a recovery may hold a job up (issue 15: a lost slice ends within 15 s). */
    public static final long RECOVERY_BOUND_MILLIS = 15_000;

    public final ChaosPlan plan;
    public final HashChains.Audit audit;
    public final boolean local;

    /** Why the documented fallback holds, if it does. */
    public final Optional<String> fallbackCondition;

    public final List<String> fallbackReasons;
    public final List<String> problems = new ArrayList<>();

    /** How long the job ran after the last loss, -1 if it did not end. */
    public long millisAfterLastLoss = -1;

    /**
     * How many TaskManagers the run lost (a plan's later losses are skipped once nothing runs the
     * job).
     */
    public int taskManagersLost;

    private ChaosVerdict(
            ChaosPlan plan,
            HashChains.Audit audit,
            boolean local,
            Optional<String> fallbackCondition,
            List<String> fallbackReasons) {
        this.plan = plan;
        this.audit = audit;
        this.local = local;
        this.fallbackCondition = fallbackCondition;
        this.fallbackReasons = fallbackReasons;
    }

    /**
     * @param plan the run's plan
     * @param attempts each subtask's final attempt, keyed {@code "<vertex name>[<index>]"}
     * @param lost per loss, the subtasks that ran on the lost TaskManager
     * @param exceptions the messages of the job's exception history
     * @param links the committed output
     * @param millisAfterLastLoss how long the job ran after the last loss, or -1 if it did not end
     * @param remainingMillis how long the job had left to run at the last loss, without failures
     */
    public static ChaosVerdict judge(
            ChaosPlan plan,
            Map<String, Integer> attempts,
            List<Set<String>> lost,
            List<String> exceptions,
            List<String> links,
            long millisAfterLastLoss,
            long remainingMillis,
            long recoveryBoundMillis) {
        HashChains.Audit audit = HashChains.audit(links, GeneratedJob.sources(), plan.count);
        Set<String> down = new TreeSet<>();
        lost.forEach(down::addAll);
        Optional<String> condition = fallbackCondition(plan, attempts.keySet(), lost);
        Optional<String> requiredBy = requiredFallback(plan, attempts.keySet(), lost);
        List<String> survivorsRestarted = new ArrayList<>();
        List<String> notRestarted = new ArrayList<>();
        attempts.forEach(
                (subtask, attempt) -> {
                    if (!down.contains(subtask) && attempt > 0) {
                        survivorsRestarted.add(subtask + "#" + attempt);
                    } else if (down.contains(subtask) && attempt == 0) {
                        notRestarted.add(subtask);
                    }
                });
        List<String> reasons = new ArrayList<>();
        for (String exception : exceptions) {
            if (exception.contains("locally")
                    || exception.contains("LocalRecoveryImpossible")
                    || exception.contains("cannot reproduce")) {
                reasons.add(exception);
            }
        }
        // when every task was lost, only the exceptions tell a rollback from a local recovery
        boolean local = survivorsRestarted.isEmpty() && reasons.isEmpty();
        ChaosVerdict verdict = new ChaosVerdict(plan, audit, local, condition, reasons);
        verdict.millisAfterLastLoss = millisAfterLastLoss;
        verdict.taskManagersLost = lost.size();
        if (!audit.exactlyOnce()) {
            verdict.problems.add(
                    "not exactly once: "
                            + audit.lost()
                            + " lost, "
                            + audit.duplicated()
                            + " duplicated, "
                            + audit.diverged()
                            + " diverged, e.g. "
                            + audit.findings().subList(0, Math.min(3, audit.findings().size())));
        }
        if (!notRestarted.isEmpty()) {
            verdict.problems.add("subtasks of lost TaskManagers kept attempt 0: " + notRestarted);
        }
        // With every task lost, a local recovery restarts all of them from the checkpoint, as the
        // rollback does: both are right, and which one a run gets depends on whether the
        // JobManager learnt of the losses at once (one batch) or one after the other.
        boolean required =
                requiredBy.isPresent() && !plan.staggered && !down.containsAll(attempts.keySet());
        if (local && required) {
            verdict.problems.add(
                    "recovered locally where the fallback condition holds ("
                            + requiredBy.get()
                            + ")");
        }
        boolean documentedGap =
                reasons.stream().anyMatch(r -> DOCUMENTED_GAPS.stream().anyMatch(r::contains));
        if (!local && !documentedGap) {
            if (condition.isEmpty()) {
                verdict.problems.add(
                        "fell back to a global rollback (surviving subtasks restarted: "
                                + survivorsRestarted
                                + ") where no fallback condition holds; reasons: "
                                + reasons);
            } else if (reasons.stream()
                    .noneMatch(r -> DOCUMENTED_FALLBACKS.stream().anyMatch(r::contains))) {
                verdict.problems.add(
                        "fell back ("
                                + condition.get()
                                + "), but the exceptions do not name the documented reason: "
                                + reasons);
            }
        }
        long boundMillis = boundAfterLastLoss(plan, remainingMillis, local, recoveryBoundMillis);
        if (lost.isEmpty()) {
            // on a loaded machine the job may end before the first planned loss: nothing was tested
            verdict.problems.add(
                    "no TaskManager was lost: the job ended before the first planned loss (after "
                            + plan.killDelays.get(0)
                            + " ms)");
        } else if (millisAfterLastLoss < 0) {
            verdict.problems.add(
                    "the job did not end within " + boundMillis + " ms after the last loss");
        } else if (millisAfterLastLoss > boundMillis) {
            verdict.problems.add(
                    "the job ended "
                            + millisAfterLastLoss
                            + " ms after the last loss, beyond its bound of "
                            + boundMillis
                            + " ms");
        }
        return verdict;
    }

    /**
     * How long a job may take after its last loss: what it had left, and {@code
     * recoveryBoundMillis} for the recovery ({@link #RECOVERY_BOUND_MILLIS} unless the run says
     * otherwise); after a global rollback, the whole run again on top (the rollback reprocesses
     * from the last checkpoint at the sources' rate).
     */
    public static long boundAfterLastLoss(
            ChaosPlan plan, long remainingMillis, boolean local, long recoveryBoundMillis) {
        return Math.max(0, remainingMillis)
                + recoveryBoundMillis
                + (local ? 0 : plan.plannedMillis());
    }

    /**
     * Why the tasks of the TaskManagers lost (one set per loss) may not be recovered locally, if
     * they may not: hops inside the lost TaskManager are free when only one was lost; with more,
     * every hop counts (a lost task may have restarted, elsewhere, before the JobManager judged the
     * others).
     */
    static Optional<String> fallbackCondition(
            ChaosPlan plan, Set<String> subtasks, List<Set<String>> lost) {
        return condition(plan, subtasks, lost, lost.size() == 1);
    }

    /**
     * Why the tasks of TaskManagers lost at once cannot be recovered locally, if they cannot: with
     * every hop inside a lost TaskManager free, the JobManager's count when it judges them in one
     * batch, and the fewest hops any of its judgments counts.
     */
    static Optional<String> requiredFallback(
            ChaosPlan plan, Set<String> subtasks, List<Set<String>> lost) {
        return condition(plan, subtasks, lost, true);
    }

    private static Optional<String> condition(
            ChaosPlan plan, Set<String> subtasks, List<Set<String>> lost, boolean freeInside) {
        Set<String> down = new TreeSet<>();
        lost.forEach(down::addAll);
        Shape shape = plan.shape;
        Map<String, int[]> index = new HashMap<>();
        for (String subtask : subtasks) {
            String vertexName = subtask.substring(0, subtask.lastIndexOf('['));
            int i =
                    Integer.parseInt(
                            subtask.substring(subtask.lastIndexOf('[') + 1, subtask.length() - 1));
            index.put(subtask, new int[] {shape.vertexOf(vertexName), i});
        }
        if (down.containsAll(subtasks)) {
            return Optional.of("every task of the job was lost");
        }
        if (plan.dsd <= 0) {
            return Optional.empty();
        }
        Map<String, String> byPosition = new HashMap<>();
        index.forEach((name, at) -> byPosition.put(at[0] + "/" + at[1], name));
        Map<String, Integer> loss = new HashMap<>();
        Set<String> lostTwice = new HashSet<>();
        for (int i = 0; i < lost.size(); i++) {
            for (String subtask : lost.get(i)) {
                if (loss.containsKey(subtask)) {
                    lostTwice.add(subtask);
                }
                loss.put(subtask, i);
            }
        }
        BiPredicate<String, String> freeHop =
                (producer, consumer) ->
                        freeInside
                                && down.contains(consumer)
                                && loss.get(producer).equals(loss.get(consumer))
                                && !lostTwice.contains(producer)
                                && !lostTwice.contains(consumer);
        Map<String, Integer> memo = new HashMap<>();
        for (String task : down) {
            int hops = hops(task, shape, index, byPosition, down, freeHop, memo);
            if (hops > plan.dsd) {
                return Optional.of(
                        task
                                + " reaches a surviving task "
                                + hops
                                + " hops between TaskManagers downstream through lost tasks, beyond DSD "
                                + plan.dsd);
            }
        }
        return Optional.empty();
    }

    /**
     * The most counted hops from {@code task} through lost tasks to a surviving one; -1 if none.
     */
    private static int hops(
            String task,
            Shape shape,
            Map<String, int[]> index,
            Map<String, String> byPosition,
            Set<String> down,
            BiPredicate<String, String> freeHop,
            Map<String, Integer> memo) {
        Integer known = memo.get(task);
        if (known != null) {
            return known;
        }
        int[] at = index.get(task);
        int longest = -1;
        for (int consumer : shape.consumers(at[0], at[1])) {
            String next = byPosition.get((at[0] + 1) + "/" + consumer);
            int hop = freeHop.test(task, next) ? 0 : 1;
            if (!down.contains(next)) {
                longest = Math.max(longest, hop);
            } else {
                int further = hops(next, shape, index, byPosition, down, freeHop, memo);
                longest = Math.max(longest, further < 0 ? -1 : further + hop);
            }
        }
        memo.put(task, longest);
        return longest;
    }

    public boolean passed() {
        return problems.isEmpty();
    }

    /** One line: the verdict, local or the fallback's reason, and what the output shows. */
    public String summary() {
        return (passed() ? "PASS" : "FAIL")
                + " | "
                + (local
                        ? "local"
                        : "global fallback" + fallbackCondition.map(c -> " (" + c + ")").orElse(""))
                + " | ended "
                + (millisAfterLastLoss < 0 ? "never" : millisAfterLastLoss + " ms")
                + " after the last loss"
                + " | links "
                + audit.links()
                + ", lost "
                + audit.lost()
                + ", duplicated "
                + audit.duplicated()
                + ", diverged "
                + audit.diverged()
                + (passed() ? "" : " | " + String.join("; ", problems));
    }
}
