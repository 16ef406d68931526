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

import io.clonos.cli.CliRun.Result;
import io.clonos.examples.CommittedLinesSink;
import io.clonos.examples.HashChainJob;
import io.clonos.examples.HashChains;
import io.clonos.examples.KafkaHashChainJob;
import io.clonos.kafka.broker.EmbeddedKafka;
import io.clonos.nexmark.failure.KafkaBroker;
import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The distribution as a user runs it: {@code bin/clonos cluster start} launches a JobManager and
 * two TaskManager JVMs, {@code bin/clonos run} submits the unchanged example jar over REST.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class StandaloneClusterIT {

    private static final long COUNT = 30_000;
    private static final int KEYS = 5;

    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path work;

    private Path dist;
    private int replacements;
    private int restPort;
    private int rpcPort;

    @BeforeAll
    void startCluster() throws Exception {
        dist = Paths.get(System.getProperty("clonos.dist", "target/clonos")).toAbsolutePath();
        assertThat(dist.resolve("bin/clonos")).as("the assembled distribution").isExecutable();
        restPort = FreePorts.next();
        rpcPort = FreePorts.next();

        Result started =
                clonos(
                        "cluster",
                        "start",
                        "--taskmanagers",
                        "4",
                        "--slots",
                        "1",
                        "-D",
                        "rest.port=" + restPort,
                        "-D",
                        "jobmanager.rpc.port=" + rpcPort,
                        "-D",
                        "metrics.fetcher.update-interval=200",
                        "-D",
                        "heartbeat.timeout=8000",
                        "-D",
                        "heartbeat.interval=1000",
                        "-D",
                        "clonos.fault-injection.enabled=true");
        assertThat(started.exitCode()).as(started.toString()).isZero();
        assertThat(started.stdout()).contains("Clonos cluster started").contains(":" + restPort);
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (dist != null) {
            clonos("cluster", "stop");
        }
    }

    @Test
    @Order(1)
    void unchangedJarSubmittedOverRestRunsOnClonosTasksAcrossTaskManagerJvms() throws Exception {
        File jar = dist.resolve("examples/clonos-examples.jar").toFile();
        assertThat(classesOf(jar))
                .as("the job jar has no Clonos runtime in it")
                .noneMatch(
                        c ->
                                c.startsWith("io/clonos/runtime")
                                        || c.startsWith("io/clonos/streaming"));

        ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);
        assertThat(taskManagerIds(rest)).containsExactlyInAnyOrder("tm-0", "tm-1", "tm-2", "tm-3");
        assertThat(pids()).hasSize(5).doesNotContain(ProcessHandle.current().pid());

        Path output = work.resolve("output");
        Result submitted =
                clonos(
                        "run",
                        "--detached",
                        "-D",
                        "rest.port=" + restPort,
                        jar.toString(),
                        "--count",
                        String.valueOf(COUNT),
                        "--rate",
                        "3000",
                        "--keys",
                        String.valueOf(KEYS),
                        "--checkpoint-interval",
                        "300",
                        "--output",
                        output.toString());
        assertThat(submitted.exitCode()).as(submitted.toString()).isZero();
        String job = submitted.jobId();

        RunningSumChecks.awaitEpochOnEverySubtask(rest, job, Duration.ofSeconds(90));
        assertThat(subtaskHosts(rest, job))
                .as("subtasks run on two TaskManagers")
                .hasSize(2)
                .isSubsetOf("tm-0", "tm-1", "tm-2", "tm-3");
        assertThat(RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(2)))
                .isEqualTo("FINISHED");
        assertThat(rest.completedCheckpoints(job)).isPositive();
        RunningSumChecks.assertComplete(output, COUNT, KEYS);

        Result status = clonos("cluster", "status", "-D", "rest.port=" + restPort);
        assertThat(status.stdout())
                .contains("tm-0")
                .contains("tm-1")
                .contains("tm-2")
                .contains("jobmanager")
                .contains("4 TaskManagers");
    }

    @Test
    @Order(2)
    void flinksOwnCliSubmitsToAClonosCluster() throws Exception {
        Path output = work.resolve("output-flink-cli");
        List<String> command =
                new ArrayList<>(
                        List.of(
                                java(),
                                "--add-opens=java.base/java.util=ALL-UNNAMED",
                                "--add-opens=java.base/java.lang=ALL-UNNAMED",
                                "-cp",
                                dist.resolve("lib") + "/*",
                                "org.apache.flink.client.cli.CliFrontend",
                                "run",
                                "-m",
                                "localhost:" + restPort,
                                dist.resolve("examples/clonos-examples.jar").toString(),
                                "--count",
                                "3000",
                                "--rate",
                                "3000",
                                "--keys",
                                "3",
                                "--output",
                                output.toString()));

        Result result = exec(command, Map.of("FLINK_CONF_DIR", dist.resolve("conf").toString()));

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).contains("has finished");
        RunningSumChecks.assertComplete(output, 3000, 3);
    }

    @Test
    @Order(3)
    void clusterProcessesRejectABadClonosValueAtStartup() throws Exception {
        for (String main :
                List.of(
                        "io.clonos.runtime.entrypoint.ClonosTaskManagerRunner",
                        "io.clonos.runtime.entrypoint.ClonosSessionClusterEntrypoint")) {
            List<String> command =
                    new ArrayList<>(
                            List.of(
                                    java(),
                                    "-cp",
                                    dist.resolve("lib") + "/*",
                                    main,
                                    "--configDir",
                                    dist.resolve("conf").toString(),
                                    "-D",
                                    "clonos.standby.placement=everywhere"));
            Result result = exec(command, Map.of());
            assertThat(result.exitCode()).as(result.toString()).isNotZero();
            assertThat(result.stdout())
                    .as(main)
                    .contains("'clonos.standby.placement'")
                    .contains("'everywhere'")
                    .contains("spread, pack");
        }
    }

    /**
     * Task failures through the JobManager ({@code bin/clonos fail}) of a source task and of a
     * middle task (the running sum, with the sink chained to it): only those two are restarted and
     * the job completes with every number counted (at-least-once: a source rewinds).
     */
    @Test
    @Order(4)
    void failedTasksAreRecoveredLocally() throws Exception {
        ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);
        long count = 60_000;
        int keys = 4;
        Path output = work.resolve("output-fail");
        String job = submitExample(count, keys, output);
        RunningSumChecks.awaitEpochOnEverySubtask(rest, job, Duration.ofSeconds(90));

        Result failedSource =
                clonos(
                        "fail",
                        "-D",
                        "rest.port=" + restPort,
                        "--job",
                        job,
                        "--vertex",
                        "numbers",
                        "--subtask",
                        "0");
        assertThat(failedSource.exitCode()).as(failedSource.toString()).isZero();
        awaitAttempt(rest, job, "numbers", 0, 1);
        // a checkpoint after the restart (the epoch metrics of a restarted job may come late, and
        // the job must not finish before the second failure)
        awaitCheckpointsBeyond(rest, job, rest.completedCheckpoints(job));
        Result failedMiddle =
                clonos(
                        "fail",
                        "-D",
                        "rest.port=" + restPort,
                        "--job",
                        job,
                        "--vertex",
                        "running-sum",
                        "--subtask",
                        "1");
        assertThat(failedMiddle.exitCode()).as(failedMiddle.toString()).isZero();

        assertThat(RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(3)))
                .isEqualTo("FINISHED");
        subtaskAttempts(rest, job)
                .forEach(
                        (subtask, attempt) ->
                                assertThat(attempt)
                                        .as(subtask)
                                        .isEqualTo(
                                                subtask.startsWith("Source: numbers")
                                                                        && subtask.endsWith("[0]")
                                                                || subtask.startsWith("running-sum")
                                                                        && subtask.endsWith("[1]")
                                                        ? 1
                                                        : 0));
        assertAtLeastOnce(output, count, keys);
    }

    private String submitExample(long count, int keys, Path output) throws Exception {
        Result submitted =
                clonos(
                        "run",
                        "--detached",
                        "-D",
                        "rest.port=" + restPort,
                        dist.resolve("examples/clonos-examples.jar").toString(),
                        "--count",
                        String.valueOf(count),
                        "--rate",
                        "2000",
                        "--keys",
                        String.valueOf(keys),
                        "--checkpoint-interval",
                        "300",
                        "--output",
                        output.toString());
        return submitted.jobId();
    }

    private void awaitAttempt(
            ClusterRestClient rest, String job, String vertexPrefix, int subtask, int attempt)
            throws Exception {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
        while (Instant.now().isBefore(deadline)) {
            for (Map.Entry<String, Integer> e : subtaskAttempts(rest, job).entrySet()) {
                if (e.getKey().contains(vertexPrefix)
                        && e.getKey().endsWith("[" + subtask + "]")
                        && e.getValue() >= attempt) {
                    return;
                }
            }
            sleep();
        }
        throw new AssertionError(
                vertexPrefix + "[" + subtask + "] did not reach attempt " + attempt);
    }

    /** Every key's final count and sum reach at least what the numbers 1..count give. */
    private static void assertAtLeastOnce(Path output, long count, int keys) throws IOException {
        Map<Long, RunningSumOutput.KeyTotal> totals = RunningSumOutput.finalTotals(output);
        RunningSumChecks.expected(count, keys)
                .forEach(
                        (key, expected) -> {
                            assertThat(totals.get(key).count)
                                    .as("count of key %d", key)
                                    .isGreaterThanOrEqualTo(expected[0]);
                            assertThat(totals.get(key).sum)
                                    .as("sum of key %d", key)
                                    .isGreaterThanOrEqualTo(expected[1]);
                        });
    }

    /**
     * SIGKILL of the TaskManager process that hosts subtask 0: only the tasks it hosted are
     * restarted, the job completes, and no number's effect is lost (at-least-once: every key's
     * count and sum reach at least their values without failure). Slow: {@link
     * #killedTaskManagerProcessIsRecoveredExactlyOnce} loses the same TaskManager under a job whose
     * checks are stricter (exactly once).
     */
    @Test
    @Tag("slow")
    @Order(6)
    void killedTaskManagerProcessIsRecoveredLocally() throws Exception {
        ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);
        long count = 40_000;
        int keys = 4;
        Path output = work.resolve("output-kill");
        String job = submitExample(count, keys, output);
        awaitCompletedCheckpoint(rest, job);

        Map<String, String> hosts = subtaskTaskManagers(rest, job);
        String victim = hosts.values().iterator().next();
        kill(victim);

        assertThat(RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(3)))
                .isEqualTo("FINISHED");
        assertOnlyTheKilledTaskManagersTasksRestarted(hosts, subtaskAttempts(rest, job), victim);
        assertAtLeastOnce(output, count, keys);
    }

    /**
     * A TaskManager JVM that runs the keyed operator's subtask 0 of a deliberately nondeterministic
     * job (input order across two sources, processing time, tied timers, processing-time windows)
     * is killed with SIGKILL. Only its tasks restart, and the committed output is exactly once:
     * every key's hash chain is contiguous and consistent, and every input took effect once.
     */
    @Test
    @Order(5)
    void killedTaskManagerProcessIsRecoveredExactlyOnce() throws Exception {
        ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);
        long count = 10_000;
        Path output = work.resolve("output-hash-chains");
        String job = submitHashChains(count, output);
        awaitCompletedCheckpoint(rest, job);

        Map<String, String> hosts = subtaskTaskManagers(rest, job);
        String victim = taskManagerOfFirstSubtask(hosts, "chain");
        long killedAt = System.currentTimeMillis();
        kill(victim);

        assertThat(RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(3)))
                .isEqualTo("FINISHED");
        assertOnlyTheKilledTaskManagersTasksRestarted(hosts, subtaskAttempts(rest, job), victim);
        HashChainChecks.assertExactlyOnce(output, count);
        assertDeclaredLostOnReports(rest, job, killedAt, "its consumers'");
        awaitUnregistered(rest, victim);
    }

    /**
     * Flink's Kafka source on a topic of 8 partitions (partition discovery on, idleness on), read
     * at parallelism 2, so that each reader interleaves about four partitions as its fetcher
     * delivers them, into the hash chains. The TaskManager JVM of the first keyed subtask (and,
     * slot-shared with it, a reader) is killed with SIGKILL while the numbers are published: only
     * its tasks restart, and every number took effect once. The job reads until cancelled; it is
     * cancelled once every number's link was committed, and the attempts are read after that.
     *
     * <p>Partition discovery every 10 s, not every second: Kafka's connector (3.4.0) fails the job
     * with a ConcurrentModificationException when its first discovery takes longer than the
     * interval, because a second discovery then initializes the same partitions again while the
     * first one's are assigned (docs/operations.md). On this loaded machine the first discovery
     * once took 1.08 s, and the job rolled back globally before any TaskManager was killed.
     */
    @Test
    @Order(7)
    void killedTaskManagerUnderAMultiPartitionKafkaSourceIsRecoveredExactlyOnce() throws Exception {
        kafkaJobLosesATaskManager(8, 8, 10_000);
    }

    /**
     * As above, with a topic of 6 partitions to which 2 are added while the job runs, before the
     * failure. Slow: in about 1 run of 8 the in-process broker let the producer's first batch to an
     * added partition expire unwritten (taken for the job's loss until the test checked its
     * producer's results; docs/architecture.md); the test now waits for the added partitions'
     * leaders, and a producer failure fails it as such.
     */
    @Test
    @Order(8)
    @Tag("slow")
    void killedTaskManagerUnderAKafkaSourceWithPartitionsAddedIsRecoveredExactlyOnce()
            throws Exception {
        // discovery every second, to find the added partitions before the failure: exposed to the
        // connector's race above when the first discovery takes longer than that
        kafkaJobLosesATaskManager(6, 8, 1_000);
    }

    /**
     * The left source, connected to the chain as its second input, reads all its numbers at once
     * and finishes, like a side input; two checkpoints later the TaskManager JVM of the first chain
     * subtask is killed with SIGKILL. The chain read the left source's end before those
     * checkpoints, and the left subtasks' partitions are gone (released once read, or with the
     * killed JVM): they restart with the killed TaskManager's tasks, finished on restore, and
     * nothing else restarts; every number took effect once.
     */
    @Test
    @Order(9)
    void killedTaskManagerWithFinishedProducersIsRecoveredExactlyOnce() throws Exception {
        ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);
        replaceKilledTaskManagers(rest, 4);
        // about 20 s of the right source: time to see the left one finish and two checkpoints
        long count = 30_000;
        Path output = work.resolve("output-finished-producers");
        String job = submitHashChains(count, output, "--left-rate", "1000000", "--connected");
        Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
        Map<String, String> states;
        do {
            states = rest.subtaskField(job, "status");
        } while (!leftFinished(states) && Instant.now().isBefore(deadline) && sleep());
        assertThat(states).as("the left source's subtasks finished").matches(this::leftFinished);
        awaitCheckpointsBeyond(rest, job, rest.completedCheckpoints(job) + 1);

        Map<String, String> hosts = subtaskTaskManagers(rest, job);
        String victim = taskManagerOfFirstSubtask(hosts, "chain");
        kill(victim);

        assertThat(RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(3)))
                .isEqualTo("FINISHED");
        Map<String, Integer> attempts = subtaskAttempts(rest, job);
        hosts.forEach(
                (subtask, taskManager) ->
                        assertThat(attempts.get(subtask))
                                .as(
                                        "attempt of %s, which ran on %s (killed: %s)",
                                        subtask, taskManager, victim)
                                .isEqualTo(
                                        taskManager.equals(victim) || subtask.contains("left")
                                                ? 1
                                                : 0));
        HashChainChecks.assertExactlyOnce(output, count);
        awaitUnregistered(rest, victim);
    }

    /**
     * Both sources of the hash chains chained to an operator that merges them in the order its task
     * takes their records ({@code --chained-sources}): the TaskManager JVM of the merge's subtask 0
     * (with its chained sources) is killed with SIGKILL. Only its tasks restart, the recovered
     * merge takes its sources' records in its predecessor's order, and the output is exactly once.
     */
    @Test
    @Order(10)
    void killedTaskManagerWithChainedSourcesIsRecoveredExactlyOnce() throws Exception {
        ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);
        replaceKilledTaskManagers(rest, 4);
        // input for some 13 s: the merge still reads its sources when it is lost, also when the
        // job's first checkpoints are slow (a producer that finished before the loss is a global
        // rollback by design)
        long count = 20_000;
        Path output = work.resolve("output-chained-sources");
        String job = submitHashChains(count, output, "--chained-sources");
        awaitCheckpointsBeyond(rest, job, rest.completedCheckpoints(job) + 1);

        Map<String, String> hosts = subtaskTaskManagers(rest, job);
        String victim = taskManagerOfFirstSubtask(hosts, "merge");
        kill(victim);

        assertThat(RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(3)))
                .isEqualTo("FINISHED");
        assertOnlyTheKilledTaskManagersTasksRestarted(hosts, subtaskAttempts(rest, job), victim);
        HashChainChecks.assertExactlyOnce(output, count);
        awaitUnregistered(rest, victim);
    }

    /**
     * The hash chains' sink in a slot sharing group of its own: its TaskManager JVM runs the sink
     * only, so it feeds no consumer that could report its death. It is killed with SIGKILL, and its
     * producers report their consumer's broken connection: the JobManager declares it lost on their
     * reports within 2 s, not by its heartbeats, only the sink restarts, and the output is exactly
     * once.
     */
    @Test
    @Order(11)
    void killedTaskManagerOfConsumersOnlyIsFoundByItsProducersReports() throws Exception {
        ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);
        replaceKilledTaskManagers(rest, 4);
        long count = 20_000;
        Path output = work.resolve("output-sink-alone");
        String job = submitHashChains(count, output, "--sink-slot-sharing-group", "sink");
        awaitCompletedCheckpoint(rest, job);

        Map<String, String> hosts = subtaskTaskManagers(rest, job);
        String victim = taskManagerOfFirstSubtask(hosts, "Sink: sink");
        assertThat(hosts)
                .as("only the sink runs on its TaskManager")
                .allSatisfy(
                        (subtask, taskManager) ->
                                assertThat(taskManager.equals(victim))
                                        .isEqualTo(subtask.startsWith("Sink: sink")));
        long killedAt = System.currentTimeMillis();
        kill(victim);

        assertThat(RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(3)))
                .isEqualTo("FINISHED");
        assertOnlyTheKilledTaskManagersTasksRestarted(hosts, subtaskAttempts(rest, job), victim);
        HashChainChecks.assertExactlyOnce(output, count);
        assertDeclaredLostOnReports(rest, job, killedAt, "its producers'");
        awaitUnregistered(rest, victim);
    }

    /** The TaskManagers that a test of Flink's exactly-once Kafka sink, served by Clonos, kills. */
    enum KafkaSinkLoss {
        /** The sink's own TaskManager (its slot sharing group holds nothing else). */
        SINK,
        /** A TaskManager of a source reader, its tagging and a keyed subtask, but not the sink. */
        UPSTREAM,
        /** Both at once: a slice from a source to the sink, whose determinants only Kafka holds. */
        SINK_AND_UPSTREAM,
        /** Every TaskManager at once; three new ones join. */
        EVERY
    }

    /**
     * An unchanged job (Kafka source, a tagging that draws random numbers, keyed hash chains with
     * processing time and timers) writes through Flink's {@code KafkaSink} with {@code
     * EXACTLY_ONCE}, served by the Clonos Kafka sink ({@code clonos.kafka-sink.exactly-once:
     * clonos}), to a broker in a process of its own; the sink's TaskManager and an upstream one are
     * killed with SIGKILL at once. Only their subtasks restart (read after the job ended), and a
     * {@code read_committed} consumer reads unbroken chains with every input once, every record
     * published by the Clonos sink and none marked divergent. The other losses: {@link
     * #killedTaskManagersUnderFlinksKafkaSinkServedByClonosAreRecoveredExactlyOnce}.
     */
    @Test
    @Order(12)
    void killedSliceOfFlinksKafkaSinkServedByClonosIsRecoveredExactlyOnce() throws Exception {
        kafkaSinkJobLoses(KafkaSinkLoss.SINK_AND_UPSTREAM);
    }

    /**
     * The same job losing the sink's TaskManager, an upstream one, or every TaskManager (the whole
     * job then recovers from the determinants in Kafka). Slow: the default run has the case the
     * first two are parts of ({@link
     * #killedSliceOfFlinksKafkaSinkServedByClonosIsRecoveredExactlyOnce}), and {@code
     * ClonosKafkaSinkITCase} loses every TaskManager of an embedded cluster.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = KafkaSinkLoss.class,
            names = {"SINK", "UPSTREAM", "EVERY"})
    @Tag("slow")
    @Order(13)
    void killedTaskManagersUnderFlinksKafkaSinkServedByClonosAreRecoveredExactlyOnce(
            KafkaSinkLoss loss) throws Exception {
        kafkaSinkJobLoses(loss);
    }

    private void kafkaSinkJobLoses(KafkaSinkLoss loss) throws Exception {
        ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);
        replaceKilledTaskManagers(rest, 4);
        long count = 12_000;
        String name = loss.name().toLowerCase(java.util.Locale.ROOT);
        String input = "numbers-" + name;
        String output = "chains-" + name;
        try (KafkaBroker kafka = KafkaBroker.inAProcessOfItsOwn(work.resolve("kafka-" + name));
                Admin admin =
                        Admin.create(
                                Map.of(
                                        AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                                        kafka.bootstrapServers()))) {
            admin.createTopics(
                            List.of(
                                    new NewTopic(input, 4, (short) 1),
                                    // one partition: the chains' links in the order published
                                    new NewTopic(output, 1, (short) 1)))
                    .all()
                    .get();
            awaitLeaders(admin, input, 4);
            String job =
                    clonos(
                                    "run",
                                    "--detached",
                                    "-D",
                                    "rest.port=" + restPort,
                                    "-D",
                                    "pipeline.classpaths="
                                            + KafkaConnectorJars.withClonosSink(dist),
                                    "-D",
                                    "clonos.kafka-sink.exactly-once=clonos",
                                    "--class",
                                    KafkaHashChainJob.class.getName(),
                                    dist.resolve("examples/clonos-examples.jar").toString(),
                                    "--bootstrap-servers",
                                    kafka.bootstrapServers(),
                                    "--topic",
                                    input,
                                    "--output-topic",
                                    output,
                                    "--sink-slot-sharing-group",
                                    "sink",
                                    "--keys",
                                    "8",
                                    "--checkpoint-interval",
                                    "300",
                                    "--discovery-interval-ms",
                                    "10000")
                            .jobId();
            try {
                awaitCompletedCheckpoint(rest, job);
                Map<String, String> hosts = subtaskTaskManagers(rest, job);
                String sinkHost = taskManagerOfFirstSubtask(hosts, "sink");
                String upstreamHost = taskManagerOfFirstSubtask(hosts, "chain");
                assertThat(sinkHost)
                        .as("the sink's slot holds nothing else")
                        .isNotEqualTo(upstreamHost);
                Set<String> victims =
                        switch (loss) {
                            case SINK -> Set.of(sinkHost);
                            case UPSTREAM -> Set.of(upstreamHost);
                            case SINK_AND_UPSTREAM -> Set.of(sinkHost, upstreamHost);
                            case EVERY -> taskManagerIds(rest);
                        };

                publishNumbers(
                        kafka.bootstrapServers(),
                        input,
                        count,
                        n -> {
                            if (n == count / 2) {
                                for (String victim : victims) {
                                    kill(victim);
                                }
                                // the slots the job lost, less the idle TaskManager's
                                startTaskManagers(
                                        loss == KafkaSinkLoss.EVERY ? 3 : victims.size() - 1);
                            }
                            return 4;
                        });
                Instant deadline = Instant.now().plus(Duration.ofSeconds(90));
                List<String> lost;
                while (!(lost =
                                        HashChains.lostInputs(
                                                CommittedRecords.read(
                                                                kafka.bootstrapServers(), output)
                                                        .values(),
                                                KafkaHashChainJob.sources(),
                                                count))
                                .isEmpty()
                        && Instant.now().isBefore(deadline)) {
                    sleep();
                }
                assertThat(lost)
                        .as(
                                "inputs not in the output topic 90 s after the last was published; job %s, exceptions %s, the cluster's logs on recovery:%n%s",
                                rest.jobState(job),
                                rest.exceptions(job),
                                logLines("CausalRecovery|Cannot recover|served by|keeps|globally"))
                        .isEmpty();
                rest.patch("/jobs/" + job + "?mode=cancel");
                assertThat(RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(1)))
                        .isEqualTo("CANCELED");
                Map<String, Integer> attempts = subtaskAttempts(rest, job);
                if (loss == KafkaSinkLoss.EVERY) {
                    assertThat(attempts.values())
                            .as("every subtask restarted")
                            .allMatch(a -> a > 0);
                } else {
                    assertOnlyTheKilledTaskManagersTasksRestarted(
                            hosts,
                            attempts,
                            victims,
                            () ->
                                    "exceptions "
                                            + rest.exceptions(job)
                                            + ", the cluster's logs on recovery:\n"
                                            + logLines(
                                                    "Recovering|locally|globally|roll|Global|CausalRecovery|switched from RUNNING to FAILED"));
                }
                CommittedRecords records = CommittedRecords.read(kafka.bootstrapServers(), output);
                assertThat(
                                HashChains.violations(
                                        records.values(), KafkaHashChainJob.sources(), count))
                        .as("broken, lossy or repeated hash chains in the output topic")
                        .isEmpty();
                assertThat(records.unmarked())
                        .as("records the Clonos sink did not publish (no position header)")
                        .isZero();
                assertThat(records.divergent()).as("records marked divergent").isZero();
                for (String victim : victims) {
                    awaitUnregistered(rest, victim);
                }
            } finally {
                // a failed case must not hold the slots of the next
                if (rest.jobState(job).map(state -> state.equals("RUNNING")).orElse(false)) {
                    rest.patch("/jobs/" + job + "?mode=cancel");
                    RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(1));
                }
            }
        }
    }

    /**
     * The tasks whose connections to the killed TaskManager broke ({@code reporters}) found it dead
     * (LostTaskManagerDetector), not its heartbeats (every 1 s, two missed: 1 to 2 s), within issue
     * 18's bound of 2 s of the kill at {@code killedAt}; prints the time.
     */
    private static void assertDeclaredLostOnReports(
            ClusterRestClient rest, String job, long killedAt, String reporters) throws Exception {
        java.util.OptionalLong detected =
                rest.firstExceptionAt(job, "its data port refuses connections");
        assertThat(detected)
                .as(
                        "the lost TaskManager declared lost on %s reports; exceptions %s",
                        reporters, rest.exceptions(job))
                .isPresent();
        long detectionMillis = detected.getAsLong() - killedAt;
        System.out.printf(
                "Failure detection: the JobManager declared the killed TaskManager lost on %s reports %d ms after SIGKILL%n",
                reporters, detectionMillis);
        assertThat(detectionMillis).isLessThan(2_000);
    }

    /** Submits {@link HashChainJob} (1500 numbers per second, 8 keys) detached; its job id. */
    private String submitHashChains(long count, Path output, String... options) throws Exception {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "run",
                                "--detached",
                                "-D",
                                "rest.port=" + restPort,
                                "--class",
                                HashChainJob.class.getName(),
                                dist.resolve("examples/clonos-examples.jar").toString(),
                                "--count",
                                String.valueOf(count),
                                "--rate",
                                "1500",
                                "--keys",
                                "8",
                                "--checkpoint-interval",
                                "300",
                                "--output",
                                output.toString()));
        args.addAll(List.of(options));
        return clonos(args.toArray(new String[0])).jobId();
    }

    private boolean leftFinished(Map<String, String> states) {
        return states.entrySet().stream()
                .filter(state -> state.getKey().contains("left"))
                .allMatch(state -> state.getValue().equals("FINISHED"));
    }

    /**
     * Runs {@link KafkaHashChainJob} on a topic of {@code partitions} partitions, grown to {@code
     * finalPartitions} a third into the input, and kills its first keyed subtask's TaskManager
     * halfway.
     */
    private void kafkaJobLosesATaskManager(
            int partitions, int finalPartitions, long discoveryIntervalMs) throws Exception {
        ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);
        replaceKilledTaskManagers(rest, 4);
        long count = 12_000;
        String topic = "numbers";
        Path output = work.resolve("output-kafka");
        try (EmbeddedKafka kafka = EmbeddedKafka.start();
                Admin admin =
                        Admin.create(
                                Map.of(
                                        AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                                        kafka.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
            Result submitted =
                    clonos(
                            "run",
                            "--detached",
                            "-D",
                            "rest.port=" + restPort,
                            "-D",
                            "pipeline.classpaths=" + KafkaConnectorJars.of(dist),
                            "--class",
                            KafkaHashChainJob.class.getName(),
                            dist.resolve("examples/clonos-examples.jar").toString(),
                            "--bootstrap-servers",
                            kafka.bootstrapServers(),
                            "--topic",
                            topic,
                            "--keys",
                            "8",
                            "--checkpoint-interval",
                            "300",
                            "--discovery-interval-ms",
                            String.valueOf(discoveryIntervalMs),
                            "--output",
                            output.toString());
            String job = submitted.jobId();
            awaitCompletedCheckpoint(rest, job);
            Map<String, String> hosts = subtaskTaskManagers(rest, job);
            String victim = taskManagerOfFirstSubtask(hosts, "chain");

            int[] current = {partitions};
            publishNumbers(
                    kafka.bootstrapServers(),
                    topic,
                    count,
                    n -> {
                        if (n == count / 3 && finalPartitions > current[0]) {
                            // discovered by the job within a second, assigned to its readers as it
                            // runs
                            admin.createPartitions(
                                            Map.of(
                                                    topic,
                                                    NewPartitions.increaseTo(finalPartitions)))
                                    .all()
                                    .get();
                            awaitLeaders(admin, topic, finalPartitions);
                            current[0] = finalPartitions;
                        }
                        if (n == count / 2) {
                            kill(victim);
                        }
                        return current[0];
                    });
            Instant deadline = Instant.now().plus(Duration.ofSeconds(90));
            List<String> lost;
            while (!(lost =
                                    HashChains.lostInputs(
                                            committedLinks(output),
                                            KafkaHashChainJob.sources(),
                                            count))
                            .isEmpty()
                    && Instant.now().isBefore(deadline)) {
                sleep();
            }
            assertThat(lost)
                    .as(
                            "inputs not committed 90 s after the last was published; job %s, exceptions %s, the cluster's logs on recovery and splits:%n%s",
                            rest.jobState(job),
                            rest.exceptions(job),
                            logLines(
                                    "CausalRecovery|Cannot recover|split\\(s\\)|Discovered new partitions|Assigning splits|Adding split"))
                    .isEmpty();
            rest.patch("/jobs/" + job + "?mode=cancel");
            assertThat(RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(1)))
                    .isEqualTo("CANCELED");
            assertOnlyTheKilledTaskManagersTasksRestarted(
                    hosts,
                    subtaskAttempts(rest, job),
                    victim,
                    () ->
                            "exceptions "
                                    + rest.exceptions(job)
                                    + ", the cluster's logs on recovery:\n"
                                    + logLines(
                                            "Recovering|locally|globally|roll|Global|CausalRecovery|switched from RUNNING to FAILED"));
            assertThat(
                            HashChains.violations(
                                    committedLinks(output), KafkaHashChainJob.sources(), count))
                    .as("broken, lossy or repeated hash chains")
                    .isEmpty();
            awaitUnregistered(rest, victim);
        }
    }

    /** Before the number {@code n} is published: what the test does then, and the partitions. */
    private interface BeforeNumber {
        int partitionsAt(long n) throws Exception;
    }

    /**
     * Publishes the numbers 1 to {@code count}, 2,000 a second, in increasing order within each
     * partition (number n to partition (n - 1) mod the partitions {@code before} gives for it).
     * Fails if the test's producer could not write one: that would look like the job's loss.
     */
    private static void publishNumbers(
            String bootstrapServers, String topic, long count, BeforeNumber before)
            throws Exception {
        Map<Long, String> unwritten = new java.util.concurrent.ConcurrentHashMap<>();
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(
                        Map.of(
                                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                                bootstrapServers,
                                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                                StringSerializer.class,
                                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                                StringSerializer.class,
                                ProducerConfig.LINGER_MS_CONFIG,
                                5))) {
            long start = System.nanoTime();
            for (long n = 1; n <= count; n++) {
                int partitions = before.partitionsAt(n);
                long number = n;
                producer.send(
                        new ProducerRecord<>(
                                topic, (int) ((n - 1) % partitions), null, String.valueOf(n)),
                        (written, failure) -> {
                            if (failure != null) {
                                unwritten.put(number, failure.toString());
                            }
                        });
                long due = start + n * 500_000L;
                LockSupport.parkNanos(due - System.nanoTime());
            }
        }
        assertThat(unwritten).as("numbers the test's producer could not write to Kafka").isEmpty();
    }

    /**
     * Waits until every partition of {@code topic} has a leader. The test's producer once failed to
     * write the first records it sent to a partition added a moment before (the batch expired after
     * 120 s, 2026-11-26): the missing numbers then looked like the job's loss.
     */
    private static void awaitLeaders(Admin admin, String topic, int partitions) throws Exception {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
        while (true) {
            List<org.apache.kafka.common.TopicPartitionInfo> described =
                    admin.describeTopics(List.of(topic))
                            .allTopicNames()
                            .get()
                            .get(topic)
                            .partitions();
            if (described.size() == partitions
                    && described.stream()
                            .allMatch(p -> p.leader() != null && !p.leader().isEmpty())) {
                return;
            }
            if (Instant.now().isAfter(deadline)) {
                throw new IllegalStateException(
                        "The partitions added to " + topic + " got no leaders: " + described);
            }
            sleep();
        }
    }

    /** Says what happened, for an assertion's message; read only when the assertion fails. */
    private interface Diagnosis {
        String describe() throws Exception;
    }

    /** The lines of the cluster's logs that match {@code pattern}, each with its file's name. */
    private static String logLines(String pattern) throws IOException {
        Pattern matching = Pattern.compile(pattern);
        StringBuilder lines = new StringBuilder();
        try (Stream<Path> logs = Files.list(work.resolve("log"))) {
            for (Path log : logs.filter(f -> f.toString().endsWith(".log")).sorted().toList()) {
                for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                    if (matching.matcher(line).find()) {
                        lines.append(log.getFileName()).append(": ").append(line).append('\n');
                    }
                }
            }
        }
        return lines.toString();
    }

    private static List<String> committedLinks(Path output) throws IOException {
        return Files.isDirectory(output) ? CommittedLinesSink.committedLines(output) : List.of();
    }

    /**
     * Starts TaskManagers of one slot until {@code count} are registered, as a resource manager
     * would replace the ones earlier tests killed.
     */
    private void replaceKilledTaskManagers(ClusterRestClient rest, int count) throws Exception {
        startTaskManagers(count - taskManagerIds(rest).size());
        Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
        while (taskManagerIds(rest).size() < count && Instant.now().isBefore(deadline)) {
            sleep();
        }
        assertThat(taskManagerIds(rest))
                .as("TaskManagers registered")
                .hasSizeGreaterThanOrEqualTo(count);
    }

    /** Starts {@code count} TaskManagers of one slot. */
    private void startTaskManagers(int count) throws Exception {
        StandaloneCluster cluster =
                new StandaloneCluster(
                        ClonosHome.fromEnvironment(
                                Map.of(
                                        "CLONOS_HOME", dist.toString(),
                                        "CLONOS_RUN_DIR", work.resolve("run").toString(),
                                        "CLONOS_LOG_DIR", work.resolve("log").toString()),
                                null),
                        System.out);
        Map<String, String> properties =
                Map.of(
                        "rest.port", String.valueOf(restPort),
                        "jobmanager.rpc.port", String.valueOf(rpcPort),
                        "metrics.fetcher.update-interval", "200",
                        "heartbeat.timeout", "8000",
                        "heartbeat.interval", "1000");
        for (int i = 0; i < count; i++) {
            // a name no TaskManager of this cluster had: an earlier test's replacements may run
            cluster.startTaskManager(properties, 1, "tm-replacement-" + replacements++);
        }
    }

    /** The TaskManager that runs subtask 0 of the vertex whose name starts with {@code vertex}. */
    private static String taskManagerOfFirstSubtask(Map<String, String> hosts, String vertex) {
        return hosts.entrySet().stream()
                .filter(e -> e.getKey().startsWith(vertex) && e.getKey().endsWith("[0]"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("No subtask 0 of " + vertex + " in " + hosts))
                .getValue();
    }

    /** Kills the TaskManager process {@code taskManager} with SIGKILL, by its pid file. */
    private static void kill(String taskManager) throws IOException {
        long pid =
                Long.parseLong(
                        Files.readString(work.resolve("run").resolve(taskManager + ".pid")).trim());
        ProcessHandle.of(pid).orElseThrow().destroyForcibly();
    }

    /**
     * The tasks of the killed TaskManager restarted, the others did not. A restarted task may take
     * more than one attempt: until the JobManager misses the dead TaskManager's heartbeats it may
     * deploy the new attempt there.
     */
    private static void assertOnlyTheKilledTaskManagersTasksRestarted(
            Map<String, String> hosts, Map<String, Integer> attempts, String victim) {
        assertOnlyTheKilledTaskManagersTasksRestarted(hosts, attempts, victim, () -> "");
    }

    /** The same; {@code diagnosis} says what happened when it fails. */
    private static void assertOnlyTheKilledTaskManagersTasksRestarted(
            Map<String, String> hosts,
            Map<String, Integer> attempts,
            String victim,
            Diagnosis diagnosis) {
        assertOnlyTheKilledTaskManagersTasksRestarted(hosts, attempts, Set.of(victim), diagnosis);
    }

    /** The same for several TaskManagers killed together. */
    private static void assertOnlyTheKilledTaskManagersTasksRestarted(
            Map<String, String> hosts,
            Map<String, Integer> attempts,
            Set<String> victim,
            Diagnosis diagnosis) {
        String why = null;
        for (Map.Entry<String, String> host : hosts.entrySet()) {
            boolean killed = victim.contains(host.getValue());
            Integer attempt = attempts.get(host.getKey());
            if (killed != (attempt != null && attempt > 0) && why == null) {
                try {
                    why = diagnosis.describe();
                } catch (Exception e) {
                    why = "(no diagnosis: " + e + ")";
                }
            }
        }
        String context = why == null ? "" : why;
        hosts.forEach(
                (subtask, tm) -> {
                    if (victim.contains(tm)) {
                        assertThat(attempts.get(subtask))
                                .as(
                                        "attempt of %s, which ran on the killed %s; %s",
                                        subtask, tm, context)
                                .isPositive();
                    } else {
                        assertThat(attempts.get(subtask))
                                .as(
                                        "attempt of %s, which ran on %s (killed: %s); %s",
                                        subtask, tm, victim, context)
                                .isZero();
                    }
                });
    }

    /**
     * Waits for a completed checkpoint, which every subtask took part in, before a TaskManager is
     * killed. Not by the subtasks' epoch metrics: after an earlier test killed a TaskManager, the
     * JobManager's metric fetcher may stay behind for longer than a job runs.
     */
    private static void awaitCompletedCheckpoint(ClusterRestClient rest, String job)
            throws Exception {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(90));
        while (rest.completedCheckpoints(job) < 1 && Instant.now().isBefore(deadline)) {
            if (!rest.jobState(job).equals(java.util.Optional.of("RUNNING"))) {
                assertThat(rest.jobState(job))
                        .as(
                                "state of job %s before its first checkpoint (its exceptions: %s)",
                                job, rest.exceptions(job))
                        .hasValue("RUNNING");
            }
            sleep();
        }
        assertThat(rest.completedCheckpoints(job))
                .as("checkpoints completed by job %s", job)
                .isPositive();
    }

    private static void awaitCheckpointsBeyond(ClusterRestClient rest, String job, long completed)
            throws Exception {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(90));
        while (rest.completedCheckpoints(job) <= completed && Instant.now().isBefore(deadline)) {
            assertThat(rest.jobState(job))
                    .as("state of job %s while it waits for a checkpoint", job)
                    .hasValue("RUNNING");
            sleep();
        }
        assertThat(rest.completedCheckpoints(job))
                .as("checkpoints completed by job %s", job)
                .isGreaterThan(completed);
    }

    /**
     * The JobManager notices a killed TaskManager by its missing heartbeats; until then it offers
     * its slots.
     */
    private void awaitUnregistered(ClusterRestClient rest, String taskManager) throws Exception {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
        while (taskManagerIds(rest).contains(taskManager) && Instant.now().isBefore(deadline)) {
            sleep();
        }
        assertThat(taskManagerIds(rest))
                .as("TaskManagers after %s was killed", taskManager)
                .doesNotContain(taskManager);
    }

    /**
     * "vertex name[subtask]" -> TaskManager id. The REST API serves a cached execution graph
     * (refreshed every few seconds), so subtasks may show as unassigned for a while.
     */
    private Map<String, String> subtaskTaskManagers(ClusterRestClient rest, String jobId)
            throws Exception {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
        Map<String, String> hosts;
        do {
            hosts = rest.subtaskField(jobId, "taskmanager-id");
        } while (hosts.containsValue("(unassigned)")
                && Instant.now().isBefore(deadline)
                && sleep());
        return hosts;
    }

    private Map<String, Integer> subtaskAttempts(ClusterRestClient rest, String jobId)
            throws Exception {
        Map<String, Integer> attempts = new java.util.TreeMap<>();
        rest.subtaskField(jobId, "attempt")
                .forEach((subtask, attempt) -> attempts.put(subtask, Integer.parseInt(attempt)));
        return attempts;
    }

    /** A field of every subtask's REST details, by "vertex name[subtask]". */
    private Set<String> taskManagerIds(ClusterRestClient rest) throws Exception {
        Set<String> ids = new HashSet<>();
        for (JsonNode tm : rest.get("/taskmanagers").path("taskmanagers")) {
            ids.add(tm.path("id").asText());
        }
        return ids;
    }

    /** The TaskManagers that host the job's subtasks. */
    private Set<String> subtaskHosts(ClusterRestClient rest, String jobId) throws Exception {
        return new HashSet<>(subtaskTaskManagers(rest, jobId).values());
    }

    private static boolean sleep() throws InterruptedException {
        Thread.sleep(200);
        return true;
    }

    private Set<Long> pids() throws IOException {
        try (var files = Files.list(work.resolve("run"))) {
            return files.map(
                            f -> {
                                try {
                                    return Long.parseLong(Files.readString(f).trim());
                                } catch (IOException e) {
                                    throw new RuntimeException(e);
                                }
                            })
                    .filter(pid -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                    .collect(Collectors.toSet());
        }
    }

    private static List<String> classesOf(File jar) throws IOException {
        try (JarFile file = new JarFile(jar)) {
            return file.stream()
                    .map(e -> e.getName())
                    .filter(n -> n.endsWith(".class"))
                    .collect(Collectors.toList());
        }
    }

    private Result clonos(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(dist.resolve("bin/clonos").toString());
        command.addAll(Arrays.asList(args));
        return exec(command, Map.of());
    }

    private static String java() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** Within JUnit's 4 minutes per test, so that a hung command fails with its output. */
    private Result exec(List<String> command, Map<String, String> environment) throws Exception {
        Map<String, String> all = new java.util.HashMap<>(environment);
        all.put("CLONOS_RUN_DIR", work.resolve("run").toString());
        all.put("CLONOS_LOG_DIR", work.resolve("log").toString());
        return CliRun.run(command, all, Duration.ofMinutes(3).plusSeconds(30));
    }
}
