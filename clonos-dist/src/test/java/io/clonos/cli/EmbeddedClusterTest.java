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

package io.clonos.cli;

import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.protocol.LostTaskManagerReport;
import io.clonos.runtime.protocol.ReplayEndReport;
import io.clonos.runtime.protocol.SchedulerEndpoint;
import io.clonos.runtime.protocol.TaskReport;
import io.clonos.runtime.rest.ClusterRestClient;
import io.clonos.runtime.standby.LocalCopies;
import io.clonos.runtime.standby.LocalStateFile;
import io.clonos.runtime.standby.StandbyMessages;
import io.clonos.runtime.standby.StandbyVertices;

import org.apache.flink.api.common.JobID;
import org.apache.flink.client.deployment.StandaloneClusterId;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.operators.coordination.CoordinationRequest;
import org.apache.flink.runtime.state.PhysicalStateHandleID;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.util.SerializedValue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The unchanged example job on the embedded Clonos cluster with two TaskManagers. */
class EmbeddedClusterTest {

    private static final long COUNT = 30_000;
    private static final int KEYS = 7;

    private static File examplesJar() {
        File jar =
                new File(
                        System.getProperty(
                                "clonos.examples.jar",
                                "../clonos-examples/target/clonos-examples-0.1.0-SNAPSHOT.jar"));
        assertThat(jar).as("the example job jar (built by clonos-examples)").isFile();
        return jar;
    }

    private static Configuration clusterConfiguration() {
        Configuration config = new Configuration();
        config.set(RestOptions.BIND_PORT, "0");
        config.set(MetricOptions.METRIC_FETCHER_UPDATE_INTERVAL, Duration.ofMillis(200));
        return config;
    }

    @Test
    void unchangedJobRunsOnClonosTasksCheckpointsAndIsCorrect(@TempDir Path output)
            throws Exception {
        try (ClonosMiniCluster cluster = ClonosMiniCluster.create(clusterConfiguration(), 2, 2)) {
            cluster.start();
            URI address = cluster.getRestAddress().get();
            ClusterRestClient rest = new ClusterRestClient(address);

            String jobId = submitExample(address, output);

            RunningSumChecks.awaitEpochOnEverySubtask(rest, jobId, Duration.ofSeconds(60));
            String source = rest.get("/jobs/" + jobId).path("vertices").get(0).path("id").asText();
            assertThat(rest.subtaskMetric(jobId, source, 0, "clonos.inFlightLog.0_0.buffers"))
                    .as("in-flight log metric of the source's first subpartition")
                    .isPresent();
            assertThat(rest.subtaskMetric(jobId, source, 0, "clonos.inFlightLogBytes")).isPresent();
            assertThat(cluster.requestJobResult(JobID.fromHexString(jobId)).get().isSuccess())
                    .isTrue();

            AccessExecutionGraph graph =
                    cluster.getArchivedExecutionGraph(JobID.fromHexString(jobId)).get();
            assertThat(
                            graph.getCheckpointStatsSnapshot()
                                    .getCounts()
                                    .getNumberOfCompletedCheckpoints())
                    .isPositive();
            assertEveryTaskInItsFirstAttempt(graph);
            RunningSumChecks.assertComplete(output, COUNT, KEYS);
        }
    }

    /**
     * bin/clonos fail on a cluster that does not allow it: the request is refused, naming the key
     * that allows it, and no task restarts.
     */
    @Test
    void failCommandIsRefusedUnlessAllowed(@TempDir Path output, @TempDir Path conf)
            throws Exception {
        Files.writeString(conf.resolve("config.yaml"), "");
        try (ClonosMiniCluster cluster = ClonosMiniCluster.create(clusterConfiguration(), 3, 1)) {
            cluster.start();
            URI address = cluster.getRestAddress().get();
            ClusterRestClient rest = new ClusterRestClient(address);
            String jobId = submitExample(address, output);
            RunningSumChecks.awaitEpochOnEverySubtask(rest, jobId, Duration.ofSeconds(60));
            java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();

            int exit =
                    ClonosCli.run(
                            new String[] {
                                "fail",
                                "--conf-dir",
                                conf.toString(),
                                "--job",
                                jobId,
                                "--vertex",
                                "running-sum",
                                "--subtask",
                                "1",
                                "-D",
                                "rest.address=" + address.getHost(),
                                "-D",
                                "rest.port=" + address.getPort()
                            },
                            System.out,
                            new java.io.PrintStream(err, true, StandardCharsets.UTF_8));

            assertThat(exit).isNotZero();
            assertThat(err.toString(StandardCharsets.UTF_8))
                    .contains("clonos.fault-injection.enabled");
            assertThat(cluster.requestJobResult(JobID.fromHexString(jobId)).get().isSuccess())
                    .isTrue();
            assertEveryTaskInItsFirstAttempt(
                    cluster.getArchivedExecutionGraph(JobID.fromHexString(jobId)).get());
        }
    }

    /** bin/clonos fail: one task fails through the JobManager and only it is restarted. */
    @Test
    void failCommandRecoversOneTaskLocally(@TempDir Path output, @TempDir Path conf)
            throws Exception {
        Files.writeString(conf.resolve("config.yaml"), "");
        Configuration allowed = clusterConfiguration();
        allowed.setString("clonos.fault-injection.enabled", "true");
        try (ClonosMiniCluster cluster = ClonosMiniCluster.create(allowed, 3, 1)) {
            cluster.start();
            URI address = cluster.getRestAddress().get();
            ClusterRestClient rest = new ClusterRestClient(address);
            String jobId = submitExample(address, output);
            RunningSumChecks.awaitEpochOnEverySubtask(rest, jobId, Duration.ofSeconds(60));

            int exit =
                    ClonosCli.run(
                            new String[] {
                                "fail",
                                "--conf-dir",
                                conf.toString(),
                                "--job",
                                jobId,
                                "--vertex",
                                "running-sum",
                                "--subtask",
                                "1",
                                "-D",
                                "rest.address=" + address.getHost(),
                                "-D",
                                "rest.port=" + address.getPort()
                            },
                            System.out,
                            System.err);

            assertThat(exit).isZero();
            assertThat(cluster.requestJobResult(JobID.fromHexString(jobId)).get().isSuccess())
                    .isTrue();
            AccessExecutionGraph graph =
                    cluster.getArchivedExecutionGraph(JobID.fromHexString(jobId)).get();
            assertThat(graph.getAllExecutionVertices())
                    .allSatisfy(
                            vertex ->
                                    assertThat(
                                                    vertex.getCurrentExecutionAttempt()
                                                            .getAttemptNumber())
                                            .as(vertex.getTaskNameWithSubtaskIndex())
                                            .isEqualTo(
                                                    vertex.getTaskNameWithSubtaskIndex()
                                                                            .startsWith(
                                                                                    "running-sum")
                                                                    && vertex
                                                                                    .getParallelSubtaskIndex()
                                                                            == 1
                                                            ? 1
                                                            : 0));
            RunningSumChecks.assertComplete(output, COUNT, KEYS);
        }
    }

    @Test
    void badClonosValueStopsTheClusterFromStarting() {
        Configuration config = clusterConfiguration();
        config.setString("clonos.determinant-sharing-depth", "-7");

        assertThatThrownBy(() -> ClonosMiniCluster.create(config, 2, 1))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'clonos.determinant-sharing-depth'")
                .hasMessageContaining("'-7'");
    }

    @Test
    void badClonosValueInTheJobFailsItsSubmission(@TempDir Path output) throws Exception {
        try (ClonosMiniCluster cluster = ClonosMiniCluster.create(clusterConfiguration(), 2, 1)) {
            cluster.start();
            Configuration client =
                    clientConfiguration(
                            cluster.getRestAddress().get(),
                            Map.of("clonos.recovery.mode", "sometimes"));

            assertThatThrownBy(
                            () ->
                                    ProgramRunner.run(
                                            client,
                                            false,
                                            examplesJar(),
                                            null,
                                            new String[] {
                                                "--count", "10", "--output", output.toString()
                                            }))
                    .hasStackTraceContaining("clonos.recovery.mode")
                    .hasStackTraceContaining("sometimes");
        }
    }

    /**
     * Standby requests sent over REST, as any REST client can send them, are refused: a state
     * request would hand out a task's checkpointed state, a forged list of copies would make a
     * replacement restore from files of the sender's choice. The job's own standbys get their
     * secret from the JobManager, and the job runs on.
     */
    @Test
    void forgedStandbyRequestsOverRestAreRefused(@TempDir Path output, @TempDir Path tmp)
            throws Exception {
        Configuration config = clusterConfiguration();
        config.setString("clonos.standby.enabled", "true");
        config.setString("io.tmp.dirs", tmp.toString());
        try (ClonosMiniCluster cluster = ClonosMiniCluster.create(config, 3, 2)) {
            cluster.start();
            URI address = cluster.getRestAddress().get();
            ClusterRestClient rest = new ClusterRestClient(address);
            String jobId = submitExample(address, output);
            rest.awaitCompletedCheckpoint(jobId, Duration.ofSeconds(60));
            JobVertexID standby = null;
            for (JsonNode vertex : rest.get("/jobs/" + jobId).path("vertices")) {
                if (vertex.path("name").asText().startsWith(StandbyVertices.NAME_PREFIX)) {
                    standby = JobVertexID.fromHexString(vertex.path("id").asText());
                }
            }
            assertThat(standby).as("a standby vertex").isNotNull();
            PhysicalStateHandleID file = new PhysicalStateHandleID("/etc/passwd");
            LocalCopies elsewhere =
                    new LocalCopies(
                            Map.of(file, new LocalStateFile("/etc/passwd", file, 1)), Map.of());
            List<CoordinationRequest> forged =
                    List.of(
                            new StandbyMessages.StateRequest(standby, 0, 0, null),
                            new StandbyMessages.StateRequest(standby, 0, 0, "0".repeat(48)),
                            new StandbyMessages.Fetched(standby, 0, 1, elsewhere, null));
            try (RestClusterClient<StandaloneClusterId> client =
                    new RestClusterClient<>(
                            clientConfiguration(address, Map.of()),
                            StandaloneClusterId.getInstance())) {
                for (CoordinationRequest request : forged) {
                    OperatorID target = OperatorID.fromJobVertexID(standby);
                    assertThatThrownBy(
                                    () ->
                                            client.sendCoordinationRequest(
                                                            JobID.fromHexString(jobId),
                                                            target,
                                                            request)
                                                    .get(1, TimeUnit.MINUTES))
                            .as("%s over REST", request)
                            .hasStackTraceContaining("Refused a standby request");
                }
            }
            assertThat(cluster.requestJobResult(JobID.fromHexString(jobId)).get().isSuccess())
                    .isTrue();
            RunningSumChecks.assertComplete(output, COUNT, KEYS);
        }
    }

    /**
     * A task's reports are operator events, which only tasks send and which Flink gives with the
     * sending attempt. Sent over REST, as any REST client can send a coordination request, a
     * lost-peer report that names a TaskManager of the job and a replay's end are refused, and so
     * is any other coordination request to Clonos's scheduler but a failure request. The job runs
     * on, every task in its first attempt.
     */
    @Test
    void taskReportsSentOverRestAreRefused(@TempDir Path output) throws Exception {
        try (ClonosMiniCluster cluster = ClonosMiniCluster.create(clusterConfiguration(), 2, 2)) {
            cluster.start();
            URI address = cluster.getRestAddress().get();
            ClusterRestClient rest = new ClusterRestClient(address);
            String jobId = submitExample(address, output);
            rest.awaitCompletedCheckpoint(jobId, Duration.ofSeconds(60));
            int dataPort =
                    rest.get("/taskmanagers").path("taskmanagers").get(0).path("dataPort").asInt();
            assertThat(dataPort).as("a TaskManager's data port").isPositive();
            List<TaskReport> forged =
                    List.of(
                            new LostTaskManagerReport("127.0.0.1", dataPort),
                            LostTaskManagerReport.ofConsumerHost("127.0.0.1"),
                            new ReplayEndReport());
            HttpClient http = HttpClient.newHttpClient();
            for (TaskReport report : forged) {
                String body =
                        "{\"serializedCoordinationRequest\":\""
                                + Base64.getEncoder()
                                        .encodeToString(
                                                new SerializedValue<>(report).getByteArray())
                                + "\"}";
                HttpResponse<String> answer =
                        http.send(
                                HttpRequest.newBuilder(
                                                address.resolve(
                                                        "/jobs/"
                                                                + jobId
                                                                + "/coordinators/"
                                                                + SchedulerEndpoint.OPERATOR_ID))
                                        .header("Content-Type", "application/json")
                                        .POST(HttpRequest.BodyPublishers.ofString(body))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                assertThat(answer.statusCode()).as("%s over REST", report).isEqualTo(500);
                assertThat(answer.body())
                        .as("%s over REST", report)
                        .contains(report.getClass().getName())
                        .contains("cannot be cast")
                        .contains(CoordinationRequest.class.getName());
            }
            try (RestClusterClient<StandaloneClusterId> client =
                    new RestClusterClient<>(
                            clientConfiguration(address, Map.of()),
                            StandaloneClusterId.getInstance())) {
                assertThatThrownBy(
                                () ->
                                        client.sendCoordinationRequest(
                                                        JobID.fromHexString(jobId),
                                                        SchedulerEndpoint.OPERATOR_ID,
                                                        new NotAFailureRequest())
                                                .get(1, TimeUnit.MINUTES))
                        .hasStackTraceContaining(
                                "Refused a coordination request to Clonos's scheduler");
            }
            JobID job = JobID.fromHexString(jobId);
            assertThat(cluster.requestJobResult(job).get().isSuccess()).isTrue();
            assertEveryTaskInItsFirstAttempt(cluster.getArchivedExecutionGraph(job).get());
            RunningSumChecks.assertComplete(output, COUNT, KEYS);
        }
    }

    private static void assertEveryTaskInItsFirstAttempt(AccessExecutionGraph graph) {
        assertThat(graph.getAllExecutionVertices())
                .allSatisfy(
                        vertex ->
                                assertThat(vertex.getCurrentExecutionAttempt().getAttemptNumber())
                                        .as(vertex.getTaskNameWithSubtaskIndex())
                                        .isZero());
    }

    /** A coordination request of a kind Clonos's scheduler does not take. */
    private record NotAFailureRequest() implements CoordinationRequest {}

    /** Submits the example job detached, as bin/clonos run does; returns its id. */
    private static String submitExample(URI address, Path output) throws Exception {
        ProgramRunner.run(
                clientConfiguration(address, Map.of()),
                true,
                examplesJar(),
                null,
                new String[] {
                    "--count",
                    String.valueOf(COUNT),
                    "--rate",
                    "3000",
                    "--keys",
                    String.valueOf(KEYS),
                    "--checkpoint-interval",
                    "300",
                    "--output",
                    output.toString()
                });
        return new ClusterRestClient(address).get("/jobs").path("jobs").get(0).path("id").asText();
    }

    private static Configuration clientConfiguration(URI address, Map<String, String> jobSettings) {
        Configuration client = Configuration.fromMap(jobSettings);
        client.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        client.set(RestOptions.ADDRESS, address.getHost());
        client.set(RestOptions.PORT, address.getPort());
        return client;
    }
}
