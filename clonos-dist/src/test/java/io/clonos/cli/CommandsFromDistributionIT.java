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

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The commands of {@code bin/clonos} run from the assembled distribution as a user calls them, with
 * small settings, so that their classes come from the distribution's class path alone. Here: {@code
 * demo}, {@code hdfs}, {@code bench overhead} (each run in a JVM of its own, the default), {@code
 * bench inflight}, {@code bench recovery} (embedded), {@code bench standby}, {@code bench
 * in-flight-log}, {@code bench output-latency} and {@code nexmark overhead}. The others have tests
 * of their own that call them there: {@code cluster}, {@code run} and {@code fail} ({@link
 * StandaloneClusterIT}), {@code sql} ({@link SqlOnClonosIT}), {@code chaos} ({@link ChaosIT}),
 * {@code process} (the image's entry point, {@link ImageLayoutIT} and {@link HelmChartIT}), {@code
 * cluster start --application} ({@link ApplicationClusterIT}), {@code bench recovery --processes
 * separate} ({@code SeparateProcessRecoveryIT}), {@code bench pod-failure} in the image ({@link
 * HelmChartIT}), {@code nexmark failure --processes separate} ({@link
 * NexmarkFailureOnProcessesIT}).
 */
class CommandsFromDistributionIT {

    @TempDir Path work;

    @Test
    void theOverheadBenchmarkRunsEachSystemInAJvmOfItsOwn() throws Exception {
        Path output = work.resolve("overhead");
        Result result =
                clonos(
                        "bench",
                        "overhead",
                        "--records",
                        "50000",
                        "--repetitions",
                        "1",
                        "--warmup-seconds",
                        "0",
                        "--output",
                        output.toString());

        assertThat(result.exitCode()).as(result.toString()).isZero();
        for (String system : List.of("Flink", "DSD 0", "DSD 1", "DSD full")) {
            assertThat(result.stdout()).as(result.toString()).contains("[" + system + "] ");
        }
        assertThat(Files.readString(output.resolve("summary.json")))
                .contains("\"benchmark\":\"overhead\"", "\"system\":\"DSD full\"");
    }

    @Test
    void theInFlightLogBenchmarkRunsFlinkAndALog() throws Exception {
        Path output = work.resolve("inflight");
        Result result =
                clonos(
                        "bench",
                        "inflight",
                        "--records",
                        "300000",
                        "--repetitions",
                        "1",
                        "--warmup-seconds",
                        "0",
                        "--checkpoint-intervals",
                        "500",
                        "--logs",
                        "epoch",
                        "--one-jvm",
                        "--output",
                        output.toString());

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).as(result.toString()).contains("[Flink] ", "[epoch] ");
    }

    /**
     * The output-latency benchmark runs with the Kafka experiments' class path: a broker in its
     * JVM, both Kafka sinks; every record of each run reaches the consumer once.
     */
    @Test
    void theOutputLatencyBenchmarkRunsBothKafkaSinks() throws Exception {
        Path output = work.resolve("output-latency");
        Result result =
                clonos(
                        "bench",
                        "output-latency",
                        "--checkpoint-intervals",
                        "500",
                        "--seconds",
                        "4",
                        "--rate",
                        "2000",
                        "--repetitions",
                        "1",
                        "--output",
                        output.toString());

        assertThat(result.exitCode()).as(result.toString()).isZero();
        String[] lines = result.stdout().trim().split("\n");
        String summary = lines[lines.length - 1];
        assertThat(summary)
                .as(result.toString())
                .startsWith("{\"rate_records_per_s\":2000,")
                .contains(
                        "\"system\":\"Clonos\",\"checkpoint_interval_ms\":500",
                        "\"system\":\"Flink KafkaSink\",\"checkpoint_interval_ms\":500")
                .containsPattern(
                        "\"lost\":0,\"duplicated\":0,\"repetitions\":1}.*\"lost\":0,\"duplicated\":0,\"repetitions\":1}");
        assertThat(output.resolve("latency-cdf-500ms.svg")).exists();
    }

    @Test
    void theDemoRecoversItsFailedTaskAlone() throws Exception {
        Result result =
                clonos(
                        "demo",
                        "--count",
                        "6000",
                        "--rate",
                        "1500",
                        "-D",
                        "rest.port=" + FreePorts.next());

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).as(result.toString()).contains(">>> ");
    }

    @Test
    void theEmbeddedRecoveryBenchmarkRunsClonosAndFlink() throws Exception {
        Path output = work.resolve("recovery");
        Result result =
                killBenchmark(
                        "recovery", "--state-kb", "1", "--kill-after", "2000", "--output", output);

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(Files.readString(output.resolve("summary.json")))
                .contains("\"benchmark\":\"recovery\"", "\"clonos\":{", "\"flink\":{");
    }

    @Test
    void theStandbyBenchmarkRunsWithAndWithoutStandbys() throws Exception {
        Path output = work.resolve("standby");
        Result result =
                killBenchmark(
                        "standby",
                        "--state-kb",
                        "16",
                        "--kill-after",
                        "2500",
                        "--repetitions",
                        "1",
                        "--output",
                        output);

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).as(result.toString()).contains("[standby] ", "[no standby] ");
        assertThat(Files.readString(output.resolve("summary.json")))
                .contains("\"benchmark\":\"standby\"", "\"withoutStandby\":{");
    }

    @Test
    void theInFlightLogMicrobenchmarkAppendsAndReplays() throws Exception {
        Result result =
                clonos(
                        "bench",
                        "in-flight-log",
                        "--megabytes",
                        "8",
                        "--memory-mb",
                        "2",
                        "--epoch-mb",
                        "2",
                        "--repetitions",
                        "1");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).as(result.toString()).contains("| log | append (MB/s) |");
    }

    @Test
    void theNexmarkOverheadExperimentRunsEachSystem() throws Exception {
        Path output = work.resolve("nexmark");
        Result result =
                clonos(
                        "nexmark",
                        "overhead",
                        "--queries",
                        "1",
                        "--warmup-seconds",
                        "1",
                        "--steady-seconds",
                        "2",
                        "--repetitions",
                        "1",
                        "--output",
                        output.toString());

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(Files.readString(output.resolve("overhead.json")))
                .contains("flink", "clonos-dsd-1", "clonos-dsd-full");
    }

    /**
     * {@code hdfs} serves HDFS in the foreground: a client writes a file and reads it back over the
     * NameNode it names, and stopping the launcher (SIGTERM, as Ctrl-C does) stops HDFS.
     */
    @Test
    void hdfsServesFilesUntilItsLauncherStops() throws Exception {
        Path dist = Paths.get(System.getProperty("clonos.dist", "target/clonos")).toAbsolutePath();
        int port = FreePorts.next();
        Process launcher =
                new ProcessBuilder(
                                dist.resolve("bin/clonos").toString(),
                                "hdfs",
                                "--dir",
                                work.resolve("hdfs").toString(),
                                "--port",
                                String.valueOf(port))
                        .redirectErrorStream(true)
                        .redirectOutput(work.resolve("hdfs.out").toFile())
                        .start();
        try {
            String uri = "hdfs://localhost:" + port;
            awaitLine(launcher, work.resolve("hdfs.out"), "HDFS at " + uri);
            Configuration hadoop = new Configuration();
            try (FileSystem fs = FileSystem.newInstance(URI.create(uri), hadoop)) {
                org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path("/check/file");
                try (FSDataOutputStream out = fs.create(file)) {
                    out.writeUTF("written through the NameNode");
                }
                try (FSDataInputStream in = fs.open(file)) {
                    assertThat(in.readUTF()).isEqualTo("written through the NameNode");
                }
            }
        } finally {
            launcher.destroy();
            assertThat(launcher.waitFor(1, TimeUnit.MINUTES)).as("the launcher stopped").isTrue();
        }
        try (Socket socket = new Socket()) {
            assertThatThrownBy(() -> socket.connect(new InetSocketAddress("localhost", port), 1000))
                    .as("the NameNode stopped with its launcher")
                    .isInstanceOf(IOException.class);
        }
    }

    /** Waits until the output {@code file} of the running {@code process} has {@code line}. */
    private static void awaitLine(Process process, Path file, String line) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!Files.readString(file).contains(line)) {
            assertThat(process.isAlive()).as(Files.readString(file)).isTrue();
            assertThat(System.nanoTime()).as(Files.readString(file)).isLessThan(deadline);
            Thread.sleep(200);
        }
    }

    /**
     * {@code bench benchmark}, which kills a task of a small job (6,000 records at 1,000 per second
     * over 16 keys), with the benchmark's own {@code options}.
     */
    private Result killBenchmark(String benchmark, Object... options) throws Exception {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "bench",
                                benchmark,
                                "--records",
                                "6000",
                                "--rate",
                                "1000",
                                "--keys",
                                "16"));
        for (Object option : options) {
            args.add(option.toString());
        }
        return clonos(args.toArray(new String[0]));
    }

    private Result clonos(String... args) throws Exception {
        Path dist = Paths.get(System.getProperty("clonos.dist", "target/clonos")).toAbsolutePath();
        List<String> command = new ArrayList<>();
        command.add(dist.resolve("bin/clonos").toString());
        command.addAll(Arrays.asList(args));
        return CliRun.run(
                command,
                Map.of("CLONOS_LOG_DIR", work.resolve("log").toString()),
                Duration.ofMinutes(3));
    }
}
