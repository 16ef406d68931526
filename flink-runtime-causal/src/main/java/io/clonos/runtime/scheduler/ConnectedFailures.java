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

import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Whether a set of tasks that are down together (failed at once, or failed while others still
 * recover) can be recovered by determinants, decided from the job's graph and where its tasks run.
 *
 * <p>A determinant of a failed task matters only if its effects reached a task that survived: the
 * failed tasks downstream of it restart from the same checkpoint and regenerate everything. Its
 * effects travel along paths of failed tasks to a survivor, and the determinant travels with them,
 * piggybacked ahead of the data, as far as {@code clonos.determinant-sharing-depth} counted hops
 * ({@code DeterminantSharing}: every hop, or only those between TaskManagers). So a failed task is
 * an <em>orphan</em> (a survivor may depend on choices nobody holds) exactly when some path from it
 * through failed tasks reaches a survivor in more counted hops than the depth. With the full depth
 * there are no orphans. When no task survived, nothing depends on any choice, but there is also
 * nothing to recover locally from: that is Flink's restart.
 *
 * <p>A sink that stores its task's determinants beside its output ({@code DeterminantHoldingSink})
 * has a consumer that never fails: the external system, one counted hop on, which holds what the
 * sink held (its own log and those within the depth) and whose output nobody regenerates. Its
 * failed upstream tasks reach it through the failed sink; and a job whose every task is down still
 * has it, so it recovers locally if no task is an orphan.
 *
 * @param <V> how the graph names a task
 */
@Internal
final class ConnectedFailures<V> {

    private final Function<V, Collection<V>> consumers;
    private final Predicate<V> holdsExternally;
    private final BiPredicate<V, V> freeHop;
    private final Set<V> down;

    /** Per failed task, the most counted hops to a survivor; -1 if it reaches none. */
    private final Map<V, Integer> hops = new HashMap<>();

    /** Per failed task, a survivor at the end of its longest path, for the log. */
    private final Map<V, V> farthest = new HashMap<>();

    /**
     * @param consumers the tasks that read each task's output
     * @param down the tasks that are down together
     */
    ConnectedFailures(Function<V, Collection<V>> consumers, Set<V> down) {
        this(consumers, task -> false, (producer, consumer) -> false, down);
    }

    /**
     * @param consumers the tasks that read each task's output
     * @param holdsExternally whether a task's sink stores its determinants beside its output
     * @param down the tasks that are down together
     */
    ConnectedFailures(
            Function<V, Collection<V>> consumers, Predicate<V> holdsExternally, Set<V> down) {
        this(consumers, holdsExternally, (producer, consumer) -> false, down);
    }

    /**
     * @param consumers the tasks that read each task's output
     * @param holdsExternally whether a task's sink stores its determinants beside its output
     * @param freeHop whether the hop from a producer to its consumer does not count towards the
     *     depth (both ran in one TaskManager through the epochs a recovery replays, and hops inside
     *     a TaskManager are free)
     * @param down the tasks that are down together
     */
    ConnectedFailures(
            Function<V, Collection<V>> consumers,
            Predicate<V> holdsExternally,
            BiPredicate<V, V> freeHop,
            Set<V> down) {
        this.consumers = consumers;
        this.holdsExternally = holdsExternally;
        this.freeHop = freeHop;
        this.down = down;
    }

    /**
     * The failed tasks whose determinants may have reached survivors beyond {@code depth} counted
     * hops; empty when every one can be recovered by determinants. {@code depth} is a determinant
     * sharing depth: negative for the full depth, 0 for no causal logging (nothing to recover by
     * determinants, so no orphans either).
     */
    Map<V, Orphan<V>> orphans(int depth) {
        Map<V, Orphan<V>> orphans = new LinkedHashMap<>();
        if (depth <= 0) {
            return orphans;
        }
        for (V task : down) {
            int longest = hopsToSurvivor(task);
            if (longest > depth) {
                orphans.put(task, new Orphan<>(farthest.get(task), longest));
            }
        }
        return orphans;
    }

    /** An orphan's farthest survivor, {@code hops} counted hops away through failed tasks. */
    record Orphan<V>(V survivor, int hops) {}

    /** Why nothing can be recovered locally: no task survived. */
    Optional<String> noSurvivor(Collection<V> allTasks) {
        return down.containsAll(allTasks) && down.stream().noneMatch(holdsExternally)
                ? Optional.of(
                        "every task of the job is down, so none holds what a local recovery needs")
                : Optional.empty();
    }

    /**
     * The most counted hops from {@code task} through failed tasks to a survivor; -1 if none is
     * reached.
     */
    private int hopsToSurvivor(V task) {
        Integer known = hops.get(task);
        if (known != null) {
            return known;
        }
        int longest = -1;
        if (holdsExternally.test(task)) {
            // the external system: a survivor one hop on, outside every TaskManager
            longest = 1;
            farthest.put(task, task);
        }
        for (V consumer : consumers.apply(task)) {
            int hop = freeHop.test(task, consumer) ? 0 : 1;
            int via;
            V survivor;
            if (!down.contains(consumer)) {
                via = hop;
                survivor = consumer;
            } else {
                int further = hopsToSurvivor(consumer);
                via = further < 0 ? -1 : further + hop;
                survivor = farthest.get(consumer);
            }
            if (via > longest) {
                longest = via;
                farthest.put(task, survivor);
            }
        }
        hops.put(task, longest);
        return longest;
    }
}
