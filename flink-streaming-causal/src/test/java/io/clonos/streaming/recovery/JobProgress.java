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

package io.clonos.streaming.recovery;

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;

import java.util.concurrent.TimeUnit;

/**
 * Waits for a job on an embedded cluster to get somewhere, read from its execution graph: every
 * subtask running, or checkpoints completed. Each wait fails after a minute, naming the job.
 */
final class JobProgress {

    private JobProgress() {}

    /** Returns once every subtask of the job runs. */
    static void awaitRunning(MiniCluster cluster, JobID job) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (System.nanoTime() < deadline) {
            AccessExecutionGraph graph = cluster.getExecutionGraph(job).get();
            // an initializing job has no vertices yet
            boolean running = graph.getAllExecutionVertices().iterator().hasNext();
            for (AccessExecutionVertex vertex : graph.getAllExecutionVertices()) {
                running &= vertex.getExecutionState() == ExecutionState.RUNNING;
            }
            if (running) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("job " + job + " did not run within a minute");
    }

    /** Returns once the job completed {@code completed} checkpoints of its own. */
    static void awaitCheckpoints(MiniCluster cluster, JobID job, long completed) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (System.nanoTime() < deadline) {
            CheckpointStatsSnapshot stats =
                    cluster.getExecutionGraph(job).get().getCheckpointStatsSnapshot();
            if (stats != null && stats.getCounts().getNumberOfCompletedCheckpoints() >= completed) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError(
                "job " + job + " did not complete " + completed + " checkpoints within a minute");
    }
}
