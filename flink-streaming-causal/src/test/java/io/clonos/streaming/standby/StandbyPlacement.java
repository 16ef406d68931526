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

package io.clonos.streaming.standby;

import io.clonos.runtime.standby.StandbyVertices;

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * For tests: waits for standbys to run away from their primaries ({@code clonos.standby.placement:
 * spread}).
 */
public final class StandbyPlacement {

    private static final String STANDBY = StandbyVertices.NAME_PREFIX;

    private StandbyPlacement() {}

    /**
     * Waits until every subtask runs, {@code alsoSettled} holds for the job's graph, and every
     * standby runs on another TaskManager than its primary; returns where each subtask runs, by
     * {@code name} (a standby's name is its primary's after "Standby: ", as its vertex's is).
     */
    public static Map<String, String> awaitSpread(
            MiniCluster cluster,
            JobID job,
            Function<AccessExecutionVertex, String> name,
            Predicate<AccessExecutionGraph> alsoSettled,
            Duration timeout)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        Map<String, String> locations = new HashMap<>();
        while (System.nanoTime() < deadline) {
            AccessExecutionGraph graph = cluster.getExecutionGraph(job).get();
            locations.clear();
            boolean settled = graph.getAllExecutionVertices().iterator().hasNext();
            for (AccessExecutionVertex vertex : graph.getAllExecutionVertices()) {
                if (vertex.getExecutionState() == ExecutionState.RUNNING) {
                    locations.put(
                            name.apply(vertex),
                            vertex.getCurrentAssignedResourceLocation()
                                    .getResourceID()
                                    .getResourceIdString());
                } else {
                    settled = false;
                }
            }
            for (Map.Entry<String, String> entry : locations.entrySet()) {
                if (entry.getKey().startsWith(STANDBY)) {
                    settled &=
                            !entry.getValue()
                                    .equals(
                                            locations.get(
                                                    entry.getKey().substring(STANDBY.length())));
                }
            }
            if (settled && alsoSettled.test(graph)) {
                return new HashMap<>(locations);
            }
            Thread.sleep(20);
        }
        throw new AssertionError(
                "Not every standby runs on another TaskManager than its primary in time: "
                        + locations);
    }
}
