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

import io.clonos.bench.experiment.SeparateProcessRecovery;
import io.clonos.cli.ClonosHome;
import io.clonos.cli.StandaloneCluster;
import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The failure experiment's clusters as separate processes ({@code bin/clonos nexmark failure
 * --processes separate}): a standalone Clonos or vanilla Flink 1.20.5 cluster started from this
 * distribution, the job submitted through Flink's REST client with the jars it needs, and the lost
 * TaskManager's JVM killed with SIGKILL, so that each system finds out as in production. Handed to
 * the harness by {@link NexmarkCommand}.
 */
@Internal
public final class SeparateFailureClusters implements FailureClusters {

    @Override
    public String name() {
        return "separate";
    }

    @Override
    public String failure() {
        return "SIGKILL";
    }

    @Override
    public Cluster start(
            boolean onClonos, Configuration config, int taskManagers, int slots, Path dir)
            throws Exception {
        ClonosHome home =
                ClonosHome.fromEnvironment(System.getenv(), null)
                        .withRunAndLogDirs(dir.resolve("run"), dir.resolve("log"));
        StandaloneCluster cluster =
                new StandaloneCluster(
                        home,
                        System.out,
                        onClonos
                                ? StandaloneCluster.Flavour.CLONOS
                                : StandaloneCluster.Flavour.FLINK);
        Map<String, String> properties = new LinkedHashMap<>(config.toMap());
        // the restart strategy is the distribution's configuration's (Flink's default: exponential
        // delay), as in bench recovery: a short fixed delay spends vanilla Flink's attempts on the
        // killed TaskManager's slots, which its JobManager holds until the heartbeat timeout
        properties.keySet().removeIf(key -> key.startsWith("restart-strategy"));
        cluster.start(properties, taskManagers, slots);
        Configuration clusterConfig = home.loadConfiguration(properties);
        ClusterRestClient rest = StandaloneCluster.restClient(clusterConfig);
        return new Cluster() {
            @Override
            public JobID submit(JobGraph job, List<Class<?>> userClasses) throws Exception {
                for (Class<?> userClass : userClasses) {
                    job.addJar(new org.apache.flink.core.fs.Path(jarOf(userClass)));
                }
                return SeparateProcessRecovery.submit(clusterConfig, job);
            }

            @Override
            public JobStatus status(JobID job) {
                // no answer (a busy JobManager): not ended as far as anyone knows
                return rest.jobState(job.toHexString())
                        .map(JobStatus::valueOf)
                        .orElse(JobStatus.RUNNING);
            }

            @Override
            public boolean running(JobID job) throws Exception {
                JobStatus status = status(job);
                if (status.isGloballyTerminalState()) {
                    throw new IllegalStateException(
                            "The job ended before it ran: " + status + cause(job));
                }
                return rest.subtasks(job.toHexString()).values().stream()
                        .allMatch(subtask -> subtask.path("status").asText().equals("RUNNING"));
            }

            @Override
            public Lost loseTaskManagersOf(JobID job, String vertex, List<Integer> subtasks)
                    throws Exception {
                Map<String, JsonNode> view = rest.subtasks(job.toHexString());
                List<String> victims = new ArrayList<>();
                for (int subtask : subtasks) {
                    victims.add(taskManagerOf(view, vertex, subtask));
                }
                FailureClusters.requireDistinct(victims, vertex, subtasks);
                long at = System.currentTimeMillis();
                for (String taskManager : victims) {
                    cluster.process(taskManager)
                            .orElseThrow(
                                    () ->
                                            new IllegalStateException(
                                                    "No process runs TaskManager " + taskManager))
                            .destroyForcibly();
                }
                return new Lost(victims, at);
            }

            private String taskManagerOf(Map<String, JsonNode> view, String vertex, int subtask) {
                for (Map.Entry<String, JsonNode> entry : view.entrySet()) {
                    String name = entry.getKey();
                    if ((name.equals(vertex + "[" + subtask + "]")
                                    || name.startsWith(vertex + " -> "))
                            && name.endsWith("[" + subtask + "]")) {
                        return entry.getValue().path("taskmanager-id").asText();
                    }
                }
                throw new IllegalStateException("No subtask " + vertex + "[" + subtask + "]");
            }

            @Override
            public int restartedSubtasks(JobID job) throws Exception {
                return (int)
                        primaries(job).stream()
                                .filter(subtask -> subtask.path("attempt").asInt() > 0)
                                .count();
            }

            @Override
            public int subtasks(JobID job) throws Exception {
                return primaries(job).size();
            }

            private Collection<JsonNode> primaries(JobID job) throws Exception {
                return rest.primarySubtasks(job.toHexString()).values();
            }

            @Override
            public String cause(JobID job) throws Exception {
                List<String> exceptions = rest.exceptions(job.toHexString());
                return exceptions.isEmpty() ? "" : ": " + exceptions.get(exceptions.size() - 1);
            }

            @Override
            public ClusterRestClient rest() {
                return rest;
            }

            @Override
            public void close() throws Exception {
                cluster.stop();
            }
        };
    }

    private static URI jarOf(Class<?> type) throws URISyntaxException {
        return type.getProtectionDomain().getCodeSource().getLocation().toURI();
    }
}
