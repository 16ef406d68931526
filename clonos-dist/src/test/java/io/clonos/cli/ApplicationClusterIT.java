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

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Clonos application cluster of separate processes: the job's jar in {@code usrlib/}, its main
 * class and arguments given to {@code clonos cluster start --application}; the JobManager runs the
 * job on Clonos's tasks and scheduler and ends with it.
 */
class ApplicationClusterIT {

    private static final long COUNT = 4_000;

    /** Kept when the test fails: the cluster's logs say why. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path work;

    private Path dist;
    private Path usrlib;

    @AfterEach
    void stop() throws Exception {
        if (dist != null) {
            clonos("cluster", "stop");
        }
        if (usrlib != null) {
            try (Stream<Path> jars = Files.list(usrlib)) {
                for (Path jar : jars.toList()) {
                    Files.delete(jar);
                }
            }
            Files.delete(usrlib);
        }
    }

    @Test
    void anApplicationClusterRunsItsJobOnClonosAndEndsWithIt() throws Exception {
        dist = Paths.get(System.getProperty("clonos.dist", "target/clonos")).toAbsolutePath();
        usrlib = Files.createDirectories(dist.resolve("usrlib"));
        Files.copy(
                dist.resolve("examples/clonos-examples.jar"),
                usrlib.resolve("job.jar"),
                StandardCopyOption.REPLACE_EXISTING);
        Path output = work.resolve("links");

        Result started =
                clonos(
                        "cluster",
                        "start",
                        "--taskmanagers",
                        "2",
                        "--slots",
                        "2",
                        "-D",
                        "rest.port=" + FreePorts.next(),
                        "-D",
                        "jobmanager.rpc.port=" + FreePorts.next(),
                        "--application",
                        HashChainJob.class.getName(),
                        "--application-args",
                        "--count "
                                + COUNT
                                + " --rate 1000 --keys 8 --checkpoint-interval 300 --output "
                                + output);
        assertThat(started.exitCode()).as(started.toString()).isZero();
        assertThat(started.stdout()).contains("Clonos application cluster started");

        Instant deadline = Instant.now().plus(Duration.ofMinutes(2));
        List<String> lost;
        while (!(lost = lostInputs(output)).isEmpty() && Instant.now().isBefore(deadline)) {
            Thread.sleep(200);
        }
        assertThat(lost).as("inputs not committed; logs in %s", work.resolve("log")).isEmpty();
        HashChainChecks.assertExactlyOnce(output, COUNT);
        String jobManagerLog = awaitJobManagerEnded();
        assertThat(jobManagerLog)
                .as("the job ran on Clonos's scheduler, rewritten as on a session cluster")
                .contains("on Clonos with ClonosConfiguration")
                .contains("Application completed SUCCESSFULLY");
        assertThat(taskManagerLogs()).contains("causal logging on");

        // the evidence stays after the cluster is stopped: its processes' logs are appended to,
        // never truncated, when they shut down
        Result stopped = clonos("cluster", "stop");
        dist = null;
        assertThat(stopped.exitCode()).as(stopped.toString()).isZero();
        assertThat(taskManagerLogs()).as("after cluster stop").contains("causal logging on");
        assertThat(
                        Files.readString(
                                work.resolve("log").resolve(StandaloneCluster.JOBMANAGER + ".log"),
                                StandardCharsets.UTF_8))
                .as("after cluster stop")
                .contains("Application completed SUCCESSFULLY");
    }

    private List<String> lostInputs(Path output) throws Exception {
        return Files.isDirectory(output)
                ? HashChains.lostInputs(
                        CommittedLinesSink.committedLines(output), HashChainJob.sources(), COUNT)
                : List.of("nothing committed yet");
    }

    /** The JobManager's log once its process ended, as an application cluster's does. */
    private String awaitJobManagerEnded() throws Exception {
        Path pid = work.resolve("run").resolve(StandaloneCluster.JOBMANAGER + ".pid");
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (System.nanoTime() < deadline) {
            boolean alive =
                    ProcessHandle.of(Long.parseLong(Files.readString(pid).trim()))
                            .map(ProcessHandle::isAlive)
                            .orElse(false);
            if (!alive) {
                break;
            }
            Thread.sleep(100);
        }
        return Files.readString(
                work.resolve("log").resolve(StandaloneCluster.JOBMANAGER + ".log"),
                StandardCharsets.UTF_8);
    }

    private String taskManagerLogs() throws Exception {
        StringBuilder logs = new StringBuilder();
        try (Stream<Path> files = Files.list(work.resolve("log"))) {
            for (Path file : files.toList()) {
                if (file.getFileName().toString().startsWith(StandaloneCluster.TASKMANAGER_PREFIX)
                        && file.toString().endsWith(".log")) {
                    logs.append(Files.readString(file, StandardCharsets.UTF_8));
                }
            }
        }
        return logs.toString();
    }

    /** Within JUnit's 4 minutes per test, so that a hung command fails with its output. */
    private Result clonos(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(dist.resolve("bin/clonos").toString());
        command.addAll(List.of(args));
        return CliRun.run(
                command,
                Map.of(
                        "CLONOS_RUN_DIR",
                        work.resolve("run").toString(),
                        "CLONOS_LOG_DIR",
                        work.resolve("log").toString()),
                Duration.ofMinutes(3).plusSeconds(30));
    }
}
