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

package io.clonos.nexmark.failure;

import io.clonos.runtime.minicluster.EmbeddedClusters;
import io.clonos.runtime.minicluster.EmbeddedTaskManagers;
import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Embedded clusters in this JVM (Flink's MiniCluster, Clonos's or vanilla), whose lost TaskManager
 * is terminated: quick and self-contained, but the JobManager learns of the loss at once, which
 * says little about a real cluster's recovery.
 */
@Internal
final class EmbeddedFailureClusters implements FailureClusters {

    static final String NAME = "embedded";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String failure() {
        return "terminated";
    }

    @Override
    public Cluster start(
            boolean onClonos, Configuration config, int taskManagers, int slots, Path dir)
            throws Exception {
        MiniCluster cluster = EmbeddedClusters.start(onClonos, config, taskManagers, slots);
        ClusterRestClient rest = new ClusterRestClient(cluster.getRestAddress().get());
        return new Cluster() {
            /** Resource id to start index, from the first loss on. */
            private Map<String, Integer> indexes;

            @Override
            public JobID submit(JobGraph job, List<Class<?>> userClasses) throws Exception {
                return cluster.submitJob(job).get().getJobID();
            }

            @Override
            public JobStatus status(JobID job) throws Exception {
                return cluster.getJobStatus(job).get();
            }

            @Override
            public boolean running(JobID job) throws Exception {
                AccessExecutionGraph graph = cluster.getExecutionGraph(job).get();
                if (graph.getState().isGloballyTerminalState()) {
                    throw new IllegalStateException(
                            "The job ended before it ran: " + graph.getState() + cause(job));
                }
                for (AccessExecutionVertex vertex : graph.getAllExecutionVertices()) {
                    if (vertex.getExecutionState() != ExecutionState.RUNNING) {
                        return false;
                    }
                }
                return true;
            }

            @Override
            public Lost loseTaskManagersOf(JobID job, String vertex, List<Integer> subtasks)
                    throws Exception {
                AccessExecutionGraph graph = cluster.getExecutionGraph(job).get();
                List<String> victims = new ArrayList<>();
                for (int subtask : subtasks) {
                    victims.add(EmbeddedClusters.location(graph, vertex, subtask));
                }
                FailureClusters.requireDistinct(victims, vertex, subtasks);
                if (indexes == null) {
                    // while every TaskManager runs: the REST API forgets a terminated one
                    indexes = EmbeddedTaskManagers.indexes(cluster);
                }
                long at = System.currentTimeMillis();
                for (String victim : victims) {
                    cluster.terminateTaskManager(indexes.get(victim)).get();
                }
                return new Lost(victims, at);
            }

            @Override
            public int restartedSubtasks(JobID job) throws Exception {
                int restarted = 0;
                for (AccessExecutionVertex vertex : primaries(job)) {
                    restarted += vertex.getCurrentExecutionAttempt().getAttemptNumber() > 0 ? 1 : 0;
                }
                return restarted;
            }

            @Override
            public int subtasks(JobID job) throws Exception {
                return primaries(job).size();
            }

            private List<AccessExecutionVertex> primaries(JobID job) throws Exception {
                return EmbeddedClusters.primaries(cluster.getArchivedExecutionGraph(job).get());
            }

            @Override
            public String cause(JobID job) throws Exception {
                return cluster.requestJobResult(job)
                        .get()
                        .getSerializedThrowable()
                        .map(t -> ": " + t.getOriginalErrorClassName() + ": " + t.getMessage())
                        .orElse("");
            }

            @Override
            public ClusterRestClient rest() {
                return rest;
            }

            @Override
            public void close() throws Exception {
                cluster.close();
            }
        };
    }
}
