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
import io.clonos.examples.SqlWindowJob;
import io.clonos.runtime.rest.ClusterRestClient;

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
 * once, and the job ends within 15 s of what it had left to do.
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
                        "heartbeat.timeout=6000");
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
        int runs = Integer.getInteger("clonos.sql.sigkill-runs", 1);
        for (int run = 1; run <= runs; run++) {
            if (run > 1) {
                stopCluster();
                startCluster();
            }
            long seconds = sqlJobLosesATaskManager("run-" + run);
            System.out.printf(
                    "SQL job jar, SIGKILL run %d of %d: local, exactly once, ended %d s after the kill%n",
                    run, runs, seconds);
        }
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
        String victim =
                hosts.entrySet().stream()
                        .filter(
                                e ->
                                        e.getKey().startsWith("Source: events")
                                                && e.getKey().endsWith("[0]"))
                        .findFirst()
                        .orElseThrow(() -> new AssertionError("no source subtask 0 in " + hosts))
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
        Instant killed = Instant.now();
        ProcessHandle.of(pid).orElseThrow().destroyForcibly();

        assertThat(RunningSumChecks.awaitTerminal(rest, job, Duration.ofMinutes(2)))
                .isEqualTo("FINISHED");
        long seconds = Duration.between(killed, Instant.now()).toSeconds();
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
                        attempts, onVictim)
                .isEqualTo(onVictim);
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
