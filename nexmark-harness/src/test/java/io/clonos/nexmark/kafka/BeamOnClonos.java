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

package io.clonos.nexmark.kafka;

import io.clonos.beam.ClonosPipelineOptions;
import io.clonos.beam.ClonosRunner;
import io.clonos.runtime.minicluster.EmbeddedClusters;

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;

import java.net.URI;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What the Beam-on-Kafka tests share: a pipeline submitted detached to an embedded Clonos cluster,
 * its checkpoints, and which of its subtasks ran where and restarted.
 */
final class BeamOnClonos {

    private BeamOnClonos() {}

    /**
     * A pipeline on ClonosRunner for {@code cluster}, checkpointing every 500 ms. Bounded sources
     * (a side input's) end once read: with checkpoints on, Beam keeps them running idle, and the
     * job never ends (on Flink as well).
     */
    static Pipeline pipeline(MiniCluster cluster, int parallelism) throws Exception {
        URI rest = cluster.getRestAddress().get();
        ClonosPipelineOptions options =
                PipelineOptionsFactory.fromArgs(
                                "--runner=ClonosRunner",
                                "--streaming=true",
                                "--parallelism=" + parallelism,
                                "--checkpointingInterval=500",
                                "--shutdownSourcesAfterIdleMs=0",
                                "--clonosMaster=" + rest.getHost() + ":" + rest.getPort())
                        .as(ClonosPipelineOptions.class);
        options.setAttachedMode(false);
        options.setFilesToStage(List.of(ClonosRunner.emptyJar().toString()));
        return Pipeline.create(options);
    }

    /** Runs {@code pipeline} (detached) and returns its job once the cluster lists it. */
    static JobID run(MiniCluster cluster, Pipeline pipeline) throws Exception {
        pipeline.run();
        while (true) {
            for (JobStatusMessage status : cluster.listJobs().get()) {
                if (!status.getJobState().isGloballyTerminalState()) {
                    return status.getJobId();
                }
            }
            Thread.sleep(50);
        }
    }

    static long completedCheckpoints(MiniCluster cluster, JobID job) throws Exception {
        CheckpointStatsSnapshot stats =
                cluster.getExecutionGraph(job).get().getCheckpointStatsSnapshot();
        return stats == null ? 0 : stats.getCounts().getNumberOfCompletedCheckpoints();
    }

    static void awaitCheckpoints(MiniCluster cluster, JobID job, long completed) throws Exception {
        while (completedCheckpoints(cluster, job) < completed) {
            Thread.sleep(100);
        }
    }

    /** The job's own subtasks (no standbys) that run on TaskManager {@code taskManager}. */
    static Set<String> subtasksOn(AccessExecutionGraph graph, String taskManager) {
        Set<String> subtasks = new HashSet<>();
        for (AccessExecutionVertex vertex : EmbeddedClusters.primaries(graph)) {
            if (vertex.getCurrentAssignedResourceLocation()
                    .getResourceID()
                    .getResourceIdString()
                    .equals(taskManager)) {
                subtasks.add(vertex.getTaskNameWithSubtaskIndex());
            }
        }
        return subtasks;
    }

    /** The job's own subtasks that finished. */
    static Set<String> finished(AccessExecutionGraph graph) {
        Set<String> finished = new HashSet<>();
        for (AccessExecutionVertex vertex : EmbeddedClusters.primaries(graph)) {
            if (vertex.getExecutionState() == ExecutionState.FINISHED) {
                finished.add(vertex.getTaskNameWithSubtaskIndex());
            }
        }
        return finished;
    }

    /** The job's own subtasks that run a later attempt than their first. */
    static Set<String> restarted(AccessExecutionGraph graph) {
        Set<String> restarted = new HashSet<>();
        for (AccessExecutionVertex vertex : EmbeddedClusters.primaries(graph)) {
            if (vertex.getCurrentExecutionAttempt().getAttemptNumber() > 0) {
                restarted.add(vertex.getTaskNameWithSubtaskIndex());
            }
        }
        return restarted;
    }
}
