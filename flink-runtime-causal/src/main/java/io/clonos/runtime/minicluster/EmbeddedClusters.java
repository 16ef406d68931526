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

package io.clonos.runtime.minicluster;

import io.clonos.runtime.standby.StandbyVertices;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ClusterOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionJobVertex;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The embedded clusters of the failure experiments (the benchmarks and the Nexmark failure
 * experiment): Clonos's, or vanilla Flink's for comparison, on the same settings.
 */
@Internal
public final class EmbeddedClusters {

    private EmbeddedClusters() {}

    /**
     * The cluster settings of a run that kills a TaskManager: slots spread over the TaskManagers,
     * quick restarts.
     */
    public static Configuration killConfiguration() {
        Configuration config = new Configuration();
        config.set(ClusterOptions.EVENLY_SPREAD_OUT_SLOTS_STRATEGY, true);
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 10);
        config.set(
                RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        return config;
    }

    /**
     * Starts a cluster of {@code taskManagers} TaskManagers with {@code slots} slots each, its REST
     * endpoint on a free port.
     */
    public static MiniCluster start(
            boolean onClonos, Configuration config, int taskManagers, int slots) throws Exception {
        Configuration withRandomPort = new Configuration(config);
        withRandomPort.set(RestOptions.BIND_PORT, "0");
        MiniClusterConfiguration clusterConfig =
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(withRandomPort)
                        .setNumTaskManagers(taskManagers)
                        .setNumSlotsPerTaskManager(slots)
                        .build();
        MiniCluster cluster =
                onClonos ? new ClonosMiniCluster(clusterConfig) : new MiniCluster(clusterConfig);
        cluster.start();
        return cluster;
    }

    /** The job vertex whose name is {@code name}, or, for a chain, whose first operator is. */
    public static AccessExecutionJobVertex vertex(AccessExecutionGraph graph, String name) {
        for (AccessExecutionJobVertex v : graph.getVerticesTopologically()) {
            if (v.getName().equals(name) || v.getName().startsWith(name + " -> ")) {
                return v;
            }
        }
        throw new IllegalStateException("No vertex " + name);
    }

    /**
     * The resource id of the TaskManager that runs subtask {@code subtask} of vertex {@code name}.
     */
    public static String location(AccessExecutionGraph graph, String name, int subtask) {
        return vertex(graph, name)
                .getTaskVertices()[subtask]
                .getCurrentAssignedResourceLocation()
                .getResourceID()
                .getResourceIdString();
    }

    /** The job's own subtasks, without Clonos's standbys (whose attempts are not the job's). */
    public static List<AccessExecutionVertex> primaries(AccessExecutionGraph graph) {
        List<AccessExecutionVertex> primaries = new ArrayList<>();
        for (AccessExecutionVertex vertex : graph.getAllExecutionVertices()) {
            if (!vertex.getTaskNameWithSubtaskIndex().startsWith(StandbyVertices.NAME_PREFIX)) {
                primaries.add(vertex);
            }
        }
        return primaries;
    }
}
