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

import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Helm chart without a Kubernetes cluster. {@code deploy/k8s/test/check-chart.sh} lints and
 * renders the chart for every values file of its {@code ci/} matrix, validates the manifests
 * against the Kubernetes schemas and checks that bad values are refused. Then the rendered session
 * cluster runs: the JobManager's and the TaskManagers' containers exactly as the manifests give
 * them (arguments, environment, config.yaml at its mount path) from the image's file tree, a job is
 * submitted, a TaskManager is killed with SIGKILL, and only its tasks restart, exactly once. What
 * it cannot check: the images, Kubernetes' scheduling, volumes and network; the containers share
 * this machine, so the test moves their ports apart and points the service names at it.
 */
class HelmChartIT {

    private static final Path SCRIPT = Paths.get("..", "deploy", "k8s", "test", "check-chart.sh");
    private static final Path MATRIX = Paths.get("..", "deploy", "k8s", "clonos", "ci");
    private static final long COUNT = 6_000;

    /** Kept when a test fails: the rendered manifests and the containers' logs say why. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path work;

    private static int checkExit;
    private static String checkOutput;
    private ImageTree image;

    @BeforeAll
    static void checkChart() throws Exception {
        CliRun.Result check =
                CliRun.run(
                        List.of("bash", SCRIPT.toString()),
                        Map.of("CLONOS_CHART_RENDERED", work.resolve("rendered").toString()),
                        Duration.ofMinutes(20));
        checkOutput = check.stdout();
        checkExit = check.exitCode();
    }

    @AfterEach
    void stopContainers() throws Exception {
        if (image != null) {
            image.close();
        }
    }

    @Test
    void everyValuesFileLintsRendersAndValidates() throws Exception {
        assertThat(checkExit).as(checkOutput).isZero();
        try (Stream<Path> files = Files.list(MATRIX)) {
            for (Path values : files.toList()) {
                String name = values.getFileName().toString().replace(".yaml", "");
                assertThat(checkOutput).as("values file %s", name).contains("ok " + name + ":");
            }
        }
        assertThat(checkOutput).contains("chart checks passed");
    }

    /**
     * The rendered session cluster loses a TaskManager pod's process to SIGKILL under the hash
     * chains: only its subtasks restart, exactly once. Slow: {@link
     * #theFailureExperimentDeletesATaskManagerPodThroughTheKubernetesApi} runs the same cluster and
     * checks the same local, exactly-once recovery after its experiment deleted a pod.
     */
    @Test
    @Tag("slow")
    void theRenderedSessionClusterRecoversAKilledTaskManagerLocally() throws Exception {
        assertThat(checkExit).as(checkOutput).isZero();
        List<JsonNode> manifests = manifests(work.resolve("rendered/session.yaml"));
        int restPort = startCluster(manifests, "session");
        ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);

        Path output = work.resolve("links");
        String job = image.submitHashChainJob(restPort, COUNT, 600, 500, output);
        rest.awaitCompletedCheckpoint(job, Duration.ofMinutes(2));
        Map<String, String> hosts = rest.subtaskField(job, "taskmanager-id");
        // the pods' names are the TaskManagers' resource ids (taskmanager.resource-id)
        String victim = hosts.values().iterator().next();
        image.kill(victim);

        assertThat(RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(3)))
                .as("the job after %s was killed; see %s", victim, work)
                .isEqualTo("FINISHED");
        HashChainChecks.assertExactlyOnce(output, COUNT);
        Map<String, String> attempts = rest.subtaskField(job, "attempt");
        hosts.forEach(
                (subtask, host) ->
                        assertThat(Integer.parseInt(attempts.get(subtask)))
                                .as(
                                        "attempt of %s, which ran on %s (killed: %s)",
                                        subtask, host, victim)
                                .matches(attempt -> host.equals(victim) == (attempt > 0)));
    }

    /**
     * The experiment Job of {@code experiment.killPod}, run from its rendered manifest against the
     * rendered session cluster: it submits its job, deletes a TaskManager pod through the
     * Kubernetes API (here a stand-in that kills the pod's process) with the Role the chart grants
     * it, and reports a local, exactly-once recovery, which the test checks against the cluster.
     */
    @Test
    void theFailureExperimentDeletesATaskManagerPodThroughTheKubernetesApi() throws Exception {
        assertThat(checkExit).as(checkOutput).isZero();
        List<JsonNode> manifests = manifests(work.resolve("rendered/experiment-pod-failure.yaml"));
        JsonNode experiment = workload(manifests, "Job", "experiment");
        String account = experiment.at("/spec/template/spec/serviceAccountName").asText();
        JsonNode role =
                manifests.stream()
                        .filter(m -> m.path("kind").asText().equals("RoleBinding"))
                        .filter(m -> m.at("/subjects/0/name").asText().equals(account))
                        .findFirst()
                        .map(binding -> binding.at("/roleRef/name").asText())
                        .flatMap(
                                name ->
                                        manifests.stream()
                                                .filter(m -> m.path("kind").asText().equals("Role"))
                                                .filter(
                                                        m ->
                                                                m.at("/metadata/name")
                                                                        .asText()
                                                                        .equals(name))
                                                .findFirst())
                        .orElseThrow(() -> new AssertionError("no Role bound to " + account));
        assertThat(role.at("/rules/0/resources").toString()).isEqualTo("[\"pods\"]");
        assertThat(role.at("/rules/0/verbs").toString()).contains("\"delete\"");

        int restPort = startCluster(manifests, "pod-failure");
        try (FakeKubernetesApi api = FakeKubernetesApi.start(pod -> image.kill(pod[1]))) {
            List<String> args = new ArrayList<>();
            container(experiment).path("args").forEach(arg -> args.add(arg.asText()));
            args.addAll(
                    List.of(
                            "--kubernetes-api",
                            api.address().toString(),
                            "--output",
                            work.resolve("results").toString(),
                            "-D",
                            "rest.address=localhost",
                            "-D",
                            "rest.port=" + restPort));
            Process run = image.container("experiment", args, Map.of());
            assertThat(run.waitFor(5, java.util.concurrent.TimeUnit.MINUTES))
                    .as("the experiment ended; see %s", work)
                    .isTrue();
            String printed =
                    Files.readString(image.root.resolve("experiment.out"), StandardCharsets.UTF_8);
            assertThat(run.exitValue()).as(printed).isZero();
            assertThat(api.requests())
                    .as("one pod deleted, at once")
                    .singleElement()
                    .asString()
                    .startsWith("DELETE /api/v1/namespaces/default/pods/")
                    .endsWith("?gracePeriodSeconds=0");
            JsonNode summary =
                    new ObjectMapper().readTree(work.resolve("results/pod-failure.json").toFile());
            assertThat(summary.path("state").asText()).isEqualTo("FINISHED");
            assertThat(api.requests().get(0))
                    .contains("/pods/" + summary.path("killed_pod").asText() + "?");
            assertThat(summary.path("audit").path("hash-chain-links").asLong())
                    .as(printed)
                    .isPositive();
            assertThat(summary.path("exactly_once").asBoolean()).as(printed).isTrue();
            // the experiment's verdict, checked against the cluster's own account of the attempts
            String job = summary.path("job").asText();
            ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);
            Map<String, String> attempts = rest.subtaskField(job, "attempt");
            List<String> restarted = new ArrayList<>();
            attempts.forEach(
                    (subtask, attempt) -> {
                        if (Integer.parseInt(attempt) > 0) {
                            restarted.add(subtask);
                        }
                    });
            assertThat(restarted).as(printed).isNotEmpty().hasSizeLessThan(attempts.size());
            assertThat(summary.path("restarted_subtasks").toString())
                    .isEqualTo(new ObjectMapper().valueToTree(restarted).toString());
            assertThat(summary.path("local").asBoolean()).as(printed).isTrue();
        }
    }

    /**
     * Starts the rendered session cluster's JobManager and TaskManagers from the image's tree, on
     * this machine (the image laid out under {@code image-<name>}), and waits for every
     * TaskManager; returns the REST port.
     */
    private int startCluster(List<JsonNode> manifests, String name) throws Exception {
        image = ImageTree.layOut(work.resolve("image-" + name));
        return startCluster(manifests, List.of());
    }

    /** The same in the laid-out image, with {@code extra} arguments for every container. */
    private int startCluster(List<JsonNode> manifests, List<String> extra) throws Exception {
        JsonNode jobManager = workload(manifests, "Deployment", "jobmanager");
        JsonNode taskManagers = workload(manifests, "StatefulSet", "taskmanager");
        mountConfig(manifests, jobManager);

        int restPort = FreePorts.next();
        List<String> sameHost = new ArrayList<>(jobManagerPorts(restPort));
        sameHost.addAll(extra);
        start(jobManager, jobManager.at("/metadata/name").asText(), sameHost);
        int replicas = taskManagers.at("/spec/replicas").asInt();
        List<String> taskManagerPorts = new ArrayList<>(sameHost);
        taskManagerPorts.addAll(
                List.of("-D", "taskmanager.rpc.port=0", "-D", "taskmanager.data.port=0"));
        for (int i = 0; i < replicas; i++) {
            start(
                    taskManagers,
                    taskManagers.at("/metadata/name").asText() + "-" + i,
                    taskManagerPorts);
        }
        image.awaitTaskManagers(ClusterRestClient.of("localhost", restPort), replicas);
        return restPort;
    }

    /** Ports of a JobManager apart from every other container's on this machine. */
    private static List<String> jobManagerPorts(int restPort) throws java.io.IOException {
        return List.of(
                "-D", "jobmanager.rpc.address=localhost",
                "-D", "jobmanager.rpc.port=" + FreePorts.next(),
                "-D", "blob.server.port=" + FreePorts.next(),
                "-D", "rest.address=localhost",
                "-D", "rest.port=" + restPort);
    }

    /**
     * The rendered high-availability cluster (two JobManagers elected in ZooKeeper) loses its
     * leading JobManager to SIGKILL under a running job: the standby JobManager takes the job over
     * from ZooKeeper and the HA storage, restarts it from its latest checkpoint, and the job
     * finishes exactly once. ZooKeeper runs from the image's class path (the one Flink shades); the
     * HA and checkpoint directories are local instead of the release's HDFS.
     */
    @Test
    void theRenderedHaClusterMovesItsJobToTheStandbyJobManager() throws Exception {
        assertThat(checkExit).as(checkOutput).isZero();
        List<JsonNode> manifests = manifests(work.resolve("rendered/ha.yaml"));
        JsonNode jobManager = workload(manifests, "Deployment", "jobmanager");
        assertThat(jobManager.at("/spec/replicas").asInt()).isEqualTo(2);
        image = ImageTree.layOut(work.resolve("image-ha"));
        int zookeeperPort = FreePorts.next();
        image.zooKeeper(zookeeperPort);
        List<String> local =
                List.of(
                        "-D", "high-availability.zookeeper.quorum=localhost:" + zookeeperPort,
                        "-D", "high-availability.zookeeper.client.session-timeout=4000",
                        "-D", "high-availability.storageDir=" + work.resolve("ha").toUri(),
                        "-D", "state.checkpoints.dir=" + work.resolve("checkpoints").toUri());
        int leaderRest = startCluster(manifests, local);
        Path output = work.resolve("ha-links");
        // the client finds the leader's REST endpoint in ZooKeeper, as a client in the cluster does
        String job = image.submitHashChainJob(leaderRest, COUNT, 600, 500, output, local);
        ClusterRestClient leader = ClusterRestClient.of("localhost", leaderRest);
        leader.awaitCompletedCheckpoint(job, Duration.ofMinutes(2));
        int standbyRest = FreePorts.next();
        List<String> standbyArgs = new ArrayList<>(jobManagerPorts(standbyRest));
        standbyArgs.addAll(local);
        String name = jobManager.at("/metadata/name").asText();
        start(jobManager, name + "-standby", standbyArgs);

        image.kill(name);

        ClusterRestClient standby = ClusterRestClient.of("localhost", standbyRest);
        assertThat(RunningSumChecks.awaitTerminal(standby, job, Duration.ofMinutes(3)))
                .as("the job on the standby JobManager after the leader was killed; see %s", work)
                .isEqualTo("FINISHED");
        HashChainChecks.assertExactlyOnce(output, COUNT);
        assertThat(logs(image.root.resolve(name + "-standby-log")))
                .as("the standby JobManager recovered the job with Clonos's scheduler")
                .contains("Scheduling hash-chains (" + job + ") on Clonos with");
    }

    /** The log files of a container, one after the other. */
    private static String logs(Path directory) throws Exception {
        StringBuilder all = new StringBuilder();
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : files.filter(Files::isRegularFile).sorted().toList()) {
                all.append(Files.readString(file, StandardCharsets.UTF_8));
            }
        }
        return all.toString();
    }

    private static List<JsonNode> manifests(Path rendered) throws Exception {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
        List<JsonNode> manifests = new ArrayList<>();
        yaml.readerFor(JsonNode.class)
                .readValues(rendered.toFile())
                .forEachRemaining(node -> manifests.add((JsonNode) node));
        manifests.removeIf(node -> node == null || node.isNull() || node.isEmpty());
        return manifests;
    }

    private static JsonNode workload(List<JsonNode> manifests, String kind, String component) {
        return manifests.stream()
                .filter(m -> m.path("kind").asText().equals(kind))
                .filter(
                        m ->
                                m.at("/metadata/labels/app.kubernetes.io~1component")
                                        .asText()
                                        .equals(component))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " of the " + component));
    }

    private static JsonNode container(JsonNode workload) {
        return workload.at("/spec/template/spec/containers/0");
    }

    /** Writes the ConfigMap's config.yaml where the containers mount it, in the image's tree. */
    private void mountConfig(List<JsonNode> manifests, JsonNode workload) throws Exception {
        for (JsonNode mount : container(workload).path("volumeMounts")) {
            String volume = mount.path("name").asText();
            for (JsonNode declared : workload.at("/spec/template/spec/volumes")) {
                String configMap = declared.at("/configMap/name").asText();
                if (!declared.path("name").asText().equals(volume) || configMap.isEmpty()) {
                    continue;
                }
                JsonNode data =
                        manifests.stream()
                                .filter(m -> m.path("kind").asText().equals("ConfigMap"))
                                .filter(m -> m.at("/metadata/name").asText().equals(configMap))
                                .findFirst()
                                .orElseThrow()
                                .path("data");
                String key = mount.path("subPath").asText();
                Path target = image.root.resolve(mount.path("mountPath").asText().substring(1));
                Files.createDirectories(target.getParent());
                Files.writeString(target, data.path(key).asText(), StandardCharsets.UTF_8);
            }
        }
    }

    /**
     * Starts a pod's container as its manifest gives it: its arguments, with Kubernetes' $(VAR)
     * references to its environment resolved, then {@code sameHost}; its environment, the pod's IP
     * being this machine's and its name {@code pod}.
     */
    private void start(JsonNode workload, String pod, List<String> sameHost) throws Exception {
        JsonNode container = container(workload);
        Map<String, String> env = new HashMap<>();
        for (JsonNode variable : container.path("env")) {
            String field = variable.at("/valueFrom/fieldRef/fieldPath").asText();
            String value =
                    field.equals("status.podIP")
                            ? "127.0.0.1"
                            : field.equals("metadata.name") ? pod : variable.path("value").asText();
            env.put(variable.path("name").asText(), value);
        }
        List<String> args = new ArrayList<>();
        for (JsonNode arg : container.path("args")) {
            String resolved = arg.asText();
            for (Map.Entry<String, String> variable : env.entrySet()) {
                resolved = resolved.replace("$(" + variable.getKey() + ")", variable.getValue());
            }
            args.add(resolved);
        }
        args.addAll(sameHost);
        image.container(pod, args, env);
    }
}
