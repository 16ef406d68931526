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

package io.clonos.bench.report;

import org.apache.flink.annotation.Internal;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which TaskManagers a failure experiment kills and when: the paper's three failure scenarios (one
 * failure, three concurrent failures, three failures staggered by 5 s). The victims are the
 * TaskManagers that run the first subtasks of one vertex, each a different process, so that every
 * kill takes a slice of the pipeline that no earlier kill took, and at least one slice survives: a
 * loss of every slice is a restart of the whole job on any system.
 */
@Internal
public enum FailurePlan {
    ONE(1, 0),
    CONCURRENT(3, 0),
    STAGGERED(3, 5_000);

    /** How many TaskManagers are killed. */
    public final int kills;

    /** Between two kills. */
    public final long spacingMs;

    FailurePlan(int kills, long spacingMs) {
        this.kills = kills;
        this.spacingMs = spacingMs;
    }

    /** The plan an option names; the message names what is allowed. */
    public static FailurePlan parse(String option, String value) {
        for (FailurePlan plan : values()) {
            if (plan.label().equals(value)) {
                return plan;
            }
        }
        throw new IllegalArgumentException(
                option + " takes one, concurrent or staggered, not '" + value + "'.");
    }

    /** The name in options and summaries. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** When the {@code index}th kill comes, after the first. */
    public long offsetMs(int index) {
        return index * spacingMs;
    }

    /**
     * The TaskManagers to kill, in order: those of the vertex's subtasks 0, 1, ... (by the REST
     * names {@code vertex[i]} to TaskManager ids), each process once.
     *
     * @throws IllegalStateException when the vertex's subtasks run on no more TaskManagers than the
     *     plan kills (raise the parallelism or spread the slots)
     */
    public List<String> victims(Map<String, String> taskManagerOfSubtask, String vertex) {
        Map<Integer, String> bySubtask = new TreeMap<>();
        taskManagerOfSubtask.forEach(
                (name, taskManager) -> {
                    if (name.startsWith(vertex + "[") && name.endsWith("]")) {
                        bySubtask.put(
                                Integer.parseInt(
                                        name.substring(vertex.length() + 1, name.length() - 1)),
                                taskManager);
                    }
                });
        List<String> processes = new ArrayList<>(new LinkedHashSet<>(bySubtask.values()));
        if (processes.size() <= kills) {
            throw new IllegalStateException(
                    String.format(
                            Locale.ROOT,
                            "--failures %s kills %d TaskManagers that run %s, but its %d subtasks run on %d, so no slice of the job would survive to recover from: give the job a parallelism of at least %d (--parallelism) and the cluster enough TaskManagers (--taskmanagers) for slots spread one per subtask and spare slots for the replacements",
                            label(),
                            kills,
                            vertex,
                            bySubtask.size(),
                            processes.size(),
                            kills + 1));
        }
        return List.copyOf(processes.subList(0, kills));
    }

    /**
     * Checks that a job of {@code parallelism} can lose the plan's TaskManagers and keep a slice:
     * each victim runs one subtask of the killed vertex, {@code vertex} (as the message names it),
     * and one more must survive.
     *
     * @throws IllegalArgumentException naming the option and the parallelism needed
     */
    public void requireSurvivorAt(int parallelism, String vertex) {
        if (parallelism <= kills) {
            throw new IllegalArgumentException(
                    String.format(
                            Locale.ROOT,
                            "--failures %s kills %d TaskManagers, each running a subtask of %s, and a slice must survive: it needs --parallelism %d or more, got %d.",
                            label(),
                            kills,
                            vertex,
                            kills + 1,
                            parallelism));
        }
    }
}
