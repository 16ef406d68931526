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
 * The Clonos input gates of the tasks running on this TaskManager, by task attempt: how a partition
 * update from the JobManager reaches the gate that must reconnect.
 */
@Internal
public final class ClonosInputGateRegistry {

    private final Map<ExecutionAttemptID, List<ClonosInputGate>> gates = new ConcurrentHashMap<>();
    private final Map<ClonosInputGate, ExecutionAttemptID> owners = new ConcurrentHashMap<>();

    ClonosInputGateRegistry() {}

    void register(ExecutionAttemptID task, ClonosInputGate gate) {
        gates.computeIfAbsent(task, t -> new CopyOnWriteArrayList<>()).add(gate);
        owners.put(gate, task);
    }

    void unregister(ClonosInputGate gate) {
        ExecutionAttemptID task = owners.remove(gate);
        if (task != null) {
            gates.computeIfPresent(
                    task,
                    (t, gates) -> {
                        gates.remove(gate);
                        return gates.isEmpty() ? null : gates;
                    });
        }
    }

    /** The gates of a task attempt, in gate index order. */
    List<ClonosInputGate> of(ExecutionAttemptID task) {
        return gates.getOrDefault(task, List.of());
    }

    void clear() {
        gates.clear();
        owners.clear();
    }
}
