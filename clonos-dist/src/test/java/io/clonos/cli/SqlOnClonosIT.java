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
import io.clonos.examples.SqlKafkaJob;
import io.clonos.examples.SqlWindowJob;
import io.clonos.kafka.broker.EmbeddedKafka;
import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink SQL on the distribution as a user ships it: a standalone Clonos cluster of separate JVMs
 * (slots spread), {@code bin/clonos sql} running a windowed aggregation over a datagen table and
 * printing its rows, and a SQL job jar whose Table API dependency is provided ({@link
 * SqlWindowJob}, {@code bin/clonos run}: a window TVF aggregate, an interval join and a {@code
 * MATCH_RECOGNIZE}) losing the TaskManager of its source's subtask 0 to SIGKILL: only that
 * TaskManager's subtasks restart, every (key, window) row, joined id and match is committed exactly
 * once, and the job ends within 15 s of what it had left to do. The same for SQL between Kafka
 * topics ({@link SqlKafkaJob}: a {@code kafka} table, a {@code GROUP BY}, an {@code upsert-kafka}
 * table written in transactions), the aggregate's TaskManager killed while a producer writes the
 * input: every key's updates committed exactly once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlOnClonosIT {

    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path work;

    private Path dist;
    private int restPort;

    @BeforeAll
    void startCluster() throws Exception {
        dist = Paths.get(System.getProperty("clonos.dist", "target/clonos")).toAbsolutePath();
        restPort = FreePorts.next();
        Result started =
                clonos(
                        "cluster",
                        "start",
                        "--taskmanagers",
                        "3",
                        "--slots",
                        "2",
                        "-D",
                        "rest.port=" + restPort,
                        "-D",
                        "jobmanager.rpc.port=" + FreePorts.next(),
                        "-D",
                        "cluster.evenly-spread-out-slots=true",
                        "-D",
                        "heartbeat.timeout=6000",
                        // not the shipped configuration's value, which bin/clonos run reads too:
                        // the jobs run with the cluster's (a job carries only what it set)
                        "-D",
                        "clonos.in-flight-log.memory=16mb",
                        // -Dclonos.sql.dsd=1 runs the jobs at DSD 1; the shipped depth otherwise
                        "-D",
                        "clonos.determinant-sharing-depth="
                                + System.getProperty("clonos.sql.dsd", "-1"));
        assertThat(started.exitCode()).as(started.toString()).isZero();
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (dist != null) {
            clonos("cluster", "stop");
        }
    }

    @Test
    void theSqlClientRunsAWindowedAggregationOverDatagenAndPrintsItsRows() throws Exception {
        Path statements = work.resolve("windows.sql");
        Files.writeString(
                statements,
                String.join(
                        "\n",
                        "SET 'sql-client.execution.result-mode' = 'tableau';",
                        "SET 'table.local-time-zone' = 'UTC';",
                        "CREATE TABLE events (id BIGINT, k AS id % 2,"
                                + " ts AS TO_TIMESTAMP_LTZ(id * 10, 3),"
                                + " WATERMARK FOR ts AS ts - INTERVAL '0.1' SECOND)"
                                + " WITH ('connector' = 'datagen', 'rows-per-second' = '1000',"
                                + " 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',"
                                + " 'fields.id.end' = '400');",
                        "SELECT k, COUNT(*) AS c, SUM(id) AS s FROM TABLE(TUMBLE(TABLE events,"
                                + " DESCRIPTOR(ts), INTERVAL '1' SECOND))"
                                + " GROUP BY k, window_start, window_end;",
                        ""));
        Result result = clonos("sql", "-D", "rest.port=" + restPort, "-f", statements.toString());

        assertThat(result.exitCode()).as(result.toString()).isZero();
        // ids 1-99 fall into the first second of event time, 100-199 into the second, ...
        assertThat(rows(result.stdout()))
                .as(result.toString())
                .contains("0|49|2450", "1|50|2500", "0|50|7450", "1|50|7500", "0|1|400");
    }

    /** The tableau's insertion rows, their columns joined by '|'. */
    private static List<String> rows(String stdout) {
        List<String> rows = new ArrayList<>();
        Matcher row = Pattern.compile("\\|\\s*\\+I\\s*\\|([^\\n]*)\\|").matcher(stdout);
        while (row.find()) {
            rows.add(String.join("|", row.group(1).trim().split("\\s*\\|\\s*")));
        }
        return rows;
    }

    /**
     * Once by default; {@code -Dclonos.sql.sigkill-runs=10 -Dclonos.test.timeout=30m} runs it ten
     * times, on a cluster started afresh for each run after the first (as for the figures in the
     * docs).
     */
    @Test
    void aSqlJobJarWithTheTableApiProvidedRecoversLocallyFromSigkill() throws Exception {
        runs("clonos.sql.sigkill-runs", "SQL job jar", "run-", this::sqlJobLosesATaskManager);
    }

    /** One run; returns the seconds from the kill to the job's end. */
    private long sqlJobLosesATaskManager(String name) throws Exception {
        long count = 12_000;
        int keys = 8;
        Path output = Files.createDirectories(work.resolve(name));
        Result submitted =
                clonos(
                        "run",
                        "--detached",
                        "-D",
                        "rest.port=" + restPort,
                        "--class",
                        SqlWindowJob.class.getName(),
                        dist.resolve("examples/clonos-examples.jar").toString(),
                        "--count",
                        String.valueOf(count),
                        "--rate",
                        "1000",
                        "--keys",
                        String.valueOf(keys),
                        "--join-and-match",
                        "true",
                        "--output",
                        output.toString());
        String job = submitted.jobId();
        ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);

        Instant deadline = Instant.now().plus(Duration.ofMinutes(1));
        while (CommittedLinesSink.committedLines(output).size() < 2 * keys
                && Instant.now().isBefore(deadline)) {
            Thread.sleep(100);
        }
        assertThat(CommittedLinesSink.committedLines(output)).hasSizeGreaterThan(keys);
        Map<String, String> hosts = rest.subtaskField(job, "taskmanager-id");
        Set<String> onVictim = killTaskManagerOf(hosts, "Source: events");
        Instant killed = Instant.now();

        assertThat(RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(2)))
                .isEqualTo("FINISHED");
        long seconds = Duration.between(killed, Instant.now()).toSeconds();
        assertOnlyRestarted(rest, job, onVictim);
        assertThat(
                        SqlWindowJob.violations(
                                CommittedLinesSink.committedLines(output), count, keys, true))
                .as("windows, joined ids or matches lost, repeated or wrong")
                .isEmpty();
        assertThat(seconds)
                .as("seconds from the kill to the job's end")
                .isLessThanOrEqualTo(count / 1_000 + 15);
        return seconds;
    }

    /**
     * Once by default; {@code -Dclonos.sql.kafka-sigkill-runs=10 -Dclonos.test.timeout=30m} runs it
     * ten times.
     */
    @Test
    void aSqlJobBetweenKafkaAndUpsertKafkaTablesRecoversLocallyFromSigkill() throws Exception {
        runs(
                "clonos.sql.kafka-sigkill-runs",
                "SQL between Kafka topics",
                "kafka-",
                this::sqlKafkaJobLosesATaskManager);
    }

    /** One run of a test, returning its seconds from the kill to the job's end. */
    private interface SigkillRun {
        long run(String name) throws Exception;
    }

    /**
     * {@code run} as often as the system property {@code runs} says (once by default), on a cluster
     * started afresh for each run after the first, each named {@code prefix} and its number; prints
     * a line per run.
     */
    private void runs(String runs, String what, String prefix, SigkillRun run) throws Exception {
        int count = Integer.getInteger(runs, 1);
        for (int i = 1; i <= count; i++) {
            if (i > 1) {
                stopCluster();
                startCluster();
            }
            long seconds = run.run(prefix + i);
            System.out.printf(
                    "%s, SIGKILL run %d of %d: local, exactly once, ended %d s after the kill%n",
                    what, i, count, seconds);
        }
    }

    /**
     * One run: 8 keys in 4 partitions (a key in one partition, so its input order is the
     * partition's), written at about 1,000 rows a second while the job runs; the aggregate's
     * subtask 0's TaskManager is killed halfway. Returns the seconds from the kill to the job's
     * end.
     */
    private long sqlKafkaJobLosesATaskManager(String name) throws Exception {
        int partitions = 4;
        int keys = 8;
        long rowsPerPartition = 1_500;
        long count = partitions * rowsPerPartition;
        String input = name + "-in";
        String output = name + "-out";
        try (EmbeddedKafka kafka = EmbeddedKafka.start();
                Admin admin =
                        Admin.create(
                                Map.of(
                                        AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                                        kafka.bootstrapServers()))) {
            admin.createTopics(
                            List.of(
                                    new NewTopic(input, partitions, (short) 1),
                                    new NewTopic(output, 1, (short) 1)))
                    .all()
                    .get();
            Result submitted =
                    clonos(
                            "run",
                            "--detached",
                            "-D",
                            "rest.port=" + restPort,
                            "-D",
                            "pipeline.classpaths=" + KafkaConnectorJars.of(dist),
                            "--class",
                            SqlKafkaJob.class.getName(),
                            dist.resolve("examples/clonos-examples.jar").toString(),
                            "--bootstrap-servers",
                            kafka.bootstrapServers(),
                            "--input",
                            input,
                            "--output",
                            output,
                            "--partitions",
                            String.valueOf(partitions),
                            "--rows-per-partition",
                            String.valueOf(rowsPerPartition));
            String job = submitted.jobId();
            ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);
            rest.awaitCompletedCheckpoint(job, Duration.ofMinutes(1));

            Map<Long, List<Long>> ids = new TreeMap<>();
            Set<String> onVictim = Set.of();
            Instant killed = null;
            try (KafkaProducer<String, String> producer =
                    new KafkaProducer<>(
                            Map.of(
                                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                                    kafka.bootstrapServers(),
                                    ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                                    true),
                            new StringSerializer(),
                            new StringSerializer())) {
                for (long id = 1; id <= count; id++) {
                    long key = id % keys;
                    producer.send(
                            new ProducerRecord<>(
                                    input,
                                    (int) (key % partitions),
                                    null,
                                    "{\"id\":" + id + ",\"k\":" + key + "}"));
                    ids.computeIfAbsent(key, k -> new ArrayList<>()).add(id);
                    if (id % 100 == 0) {
                        producer.flush();
                        // pacing the input, so that the job is still at work when it is killed
                        Thread.sleep(100);
                    }
                    if (id == count / 2) {
                        onVictim =
                                killTaskManagerOf(
                                        rest.subtaskField(job, "taskmanager-id"), "GroupAggregate");
                        killed = Instant.now();
                    }
                }
            }

            assertThat(RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(2)))
                    .isEqualTo("FINISHED");
            long seconds = Duration.between(killed, Instant.now()).toSeconds();
            assertOnlyRestarted(rest, job, onVictim);
            assertThat(SqlKafkaJob.violations(committedUpdates(kafka, output, count), ids))
                    .as("updates lost, repeated or wrong in the upsert-kafka table")
                    .isEmpty();
            assertThat(seconds)
                    .as("seconds from the kill to the job's end (%d s of input were left)", 3)
                    .isLessThanOrEqualTo(3 + 15);
            return seconds;
        }
    }

    /**
     * Every committed record of {@code topic} (transactions' records only once committed), as each
     * key's (count, sum) in the topic's order; a tombstone is a count of -1.
     */
    private static Map<Long, List<long[]>> committedUpdates(
            EmbeddedKafka kafka, String topic, long expected) {
        Map<Long, List<long[]>> updates = new TreeMap<>();
        Pattern field = Pattern.compile("\"(k|c|s)\":(-?\\d+)");
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(
                        Map.of(
                                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                                kafka.bootstrapServers(),
                                ConsumerConfig.GROUP_ID_CONFIG,
                                "sql-on-clonos-check",
                                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                                "earliest",
                                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                                "read_committed"),
                        new StringDeserializer(),
                        new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            long read = 0;
            int emptyPolls = 0;
            // the job has finished: all it committed is there; stop after the last record
            while (read < expected && emptyPolls < 20) {
                var records = consumer.poll(Duration.ofMillis(500));
                emptyPolls = records.isEmpty() ? emptyPolls + 1 : 0;
                for (ConsumerRecord<String, String> record : records) {
                    read++;
                    if (record.value() == null) {
                        Matcher key = field.matcher(record.key());
                        updates.computeIfAbsent(
                                        key.find() ? Long.parseLong(key.group(2)) : -1L,
                                        k -> new ArrayList<>())
                                .add(new long[] {-1, 0});
                        continue;
                    }
                    Map<String, Long> value = new TreeMap<>();
                    Matcher matcher = field.matcher(record.value());
                    while (matcher.find()) {
                        value.put(matcher.group(1), Long.parseLong(matcher.group(2)));
                    }
                    updates.computeIfAbsent(value.get("k"), k -> new ArrayList<>())
                            .add(new long[] {value.get("c"), value.get("s")});
                }
            }
        }
        return updates;
    }

    /**
     * Kills, with SIGKILL, the TaskManager of subtask 0 of the first vertex whose name starts with
     * {@code vertex}; returns the subtasks it ran.
     */
    private Set<String> killTaskManagerOf(Map<String, String> hosts, String vertex)
            throws Exception {
        String victim =
                hosts.entrySet().stream()
                        .filter(e -> e.getKey().startsWith(vertex) && e.getKey().endsWith("[0]"))
                        .findFirst()
                        .orElseThrow(
                                () -> new AssertionError("no " + vertex + " subtask 0 in " + hosts))
                        .getValue();
        Set<String> onVictim = new TreeSet<>();
        hosts.forEach(
                (subtask, host) -> {
                    if (host.equals(victim)) {
                        onVictim.add(subtask);
                    }
                });
        long pid =
                Long.parseLong(
                        Files.readString(work.resolve("run").resolve(victim + ".pid")).trim());
        ProcessHandle.of(pid).orElseThrow().destroyForcibly();
        return onVictim;
    }

    /**
     * Asserts that, the job ended, exactly the subtasks {@code restarted} have an attempt above 0.
     */
    private static void assertOnlyRestarted(
            ClusterRestClient rest, String job, Set<String> expected) throws Exception {
        Map<String, String> attempts = new TreeMap<>(rest.subtaskField(job, "attempt"));
        Set<String> restarted = new TreeSet<>();
        attempts.forEach(
                (subtask, attempt) -> {
                    if (!attempt.equals("0")) {
                        restarted.add(subtask);
                    }
                });
        assertThat(restarted)
                .as(
                        "restarted subtasks (attempts %s), the killed TaskManager's being %s",
                        attempts, expected)
                .isEqualTo(expected);
    }

    private Result clonos(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(dist.resolve("bin/clonos").toString());
        command.addAll(Arrays.asList(args));
        return CliRun.run(
                command,
                Map.of(
                        "CLONOS_RUN_DIR", work.resolve("run").toString(),
                        "CLONOS_LOG_DIR", work.resolve("log").toString()),
                Duration.ofMinutes(3));
    }
}
