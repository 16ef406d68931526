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

package io.clonos.runtime.network;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The Clonos input gates of the tasks running in this JVM, by task attempt: how a task reaches its
 * gates (Flink hands the task its gates wrapped in a metrics decorator) and how a partition update
 * from the JobManager reaches the gate that must reconnect. Attempt ids are unique, so TaskManagers
 * sharing a JVM do not collide.
 */
@Internal
public final class ClonosInputGates {

    private static final Map<ExecutionAttemptID, List<ClonosInputGate>> GATES = new ConcurrentHashMap<>();
    private static final Map<ClonosInputGate, ExecutionAttemptID> OWNERS = new ConcurrentHashMap<>();

    private ClonosInputGates() {}

    static void register(ExecutionAttemptID task, ClonosInputGate gate) {
        GATES.computeIfAbsent(task, t -> new CopyOnWriteArrayList<>()).add(gate);
        OWNERS.put(gate, task);
    }

    static void unregister(ClonosInputGate gate) {
        ExecutionAttemptID task = OWNERS.remove(gate);
        if (task != null) {
            GATES.computeIfPresent(task, (t, gates) -> {
                gates.remove(gate);
                return gates.isEmpty() ? null : gates;
            });
        }
    }

    /** The gates of a task attempt, in gate index order. */
    public static List<ClonosInputGate> of(ExecutionAttemptID task) {
        return GATES.getOrDefault(task, List.of());
    }
}
