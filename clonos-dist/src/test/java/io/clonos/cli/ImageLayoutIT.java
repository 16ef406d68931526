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

import io.clonos.examples.HashChainJob;
import io.clonos.runtime.rest.ClusterRestClient;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Clonos image without a container runtime: lays out the image's files from the repository the
 * way {@code deploy/k8s/image/Dockerfile} copies them (its COPY, ENV and mkdir lines), then runs
 * the image's entrypoint roles from that tree as the containers of a session cluster would (one
 * JobManager, two TaskManagers, each in the foreground), submits the hash-chain job through the
 * entrypoint and checks it ran exactly once. What it cannot check: the base image itself.
 */
class ImageLayoutIT {

    private static final Path DOCKERFILE = Paths.get("..", "deploy", "k8s", "image", "Dockerfile");
    private static final long COUNT = 3_000;

    /** Kept when the test fails: the processes' logs say why. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path image;

    private final List<Process> containers = new ArrayList<>();

    @AfterEach
    void stopContainers() throws Exception {
        for (Process container : containers) {
            container.destroy();
        }
        for (Process container : containers) {
            assertThat(container.waitFor(1, TimeUnit.MINUTES)).as("the container stopped").isTrue();
        }
    }

    @Test
    void theImagesEntrypointRunsASessionClusterThatRunsAJob() throws Exception {
        Map<String, String> env = layOut(Files.readAllLines(DOCKERFILE, StandardCharsets.UTF_8));
        Path home = Paths.get(env.get("CLONOS_HOME"));
        Path entrypoint = home.resolve("bin/docker-entrypoint.sh");
        assertThat(entrypoint).isExecutable();
        assertThat(home.resolve("usrlib")).isDirectory();
        int restPort = FreePorts.next();
        int rpcPort = FreePorts.next();
        List<String> cluster =
                List.of("-D", "rest.port=" + restPort, "-D", "jobmanager.rpc.port=" + rpcPort);

        container(env, "jobmanager", entrypoint, cluster);
        List<String> taskManager = new ArrayList<>(cluster);
        taskManager.addAll(List.of("-D", "taskmanager.numberOfTaskSlots=2"));
        container(env, "taskmanager-0", entrypoint, taskManager);
        container(env, "taskmanager-1", entrypoint, taskManager);
        ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);
        awaitTaskManagers(rest, 2);

        Path output = image.resolve("links");
        List<String> run =
                new ArrayList<>(List.of("run", "--detached", "-D", "rest.port=" + restPort));
        run.addAll(
                List.of(
                        "--class",
                        HashChainJob.class.getName(),
                        home.resolve("examples/clonos-examples.jar").toString(),
                        "--count",
                        String.valueOf(COUNT),
                        "--rate",
                        "1000",
                        "--keys",
                        "8",
                        "--checkpoint-interval",
                        "300",
                        "--output",
                        output.toString()));
        ProcessBuilder submit = builder(env, entrypoint, run).redirectErrorStream(true);
        Process submitted = submit.start();
        String printed =
                new String(submitted.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(submitted.waitFor(2, TimeUnit.MINUTES)).isTrue();
        assertThat(submitted.exitValue()).as(printed).isZero();
        Matcher jobId = Pattern.compile("JobID ([0-9a-f]{32})").matcher(printed);
        assertThat(jobId.find()).as(printed).isTrue();

        assertThat(RunningSumChecks.awaitTerminal(rest, jobId.group(1), Duration.ofMinutes(2)))
                .isEqualTo("FINISHED");
        HashChainChecks.assertExactlyOnce(output, COUNT);
        // the job's tasks may all run on either TaskManager
        assertThat(
                        Files.readString(
                                        image.resolve("taskmanager-0-log/taskmanager.log"),
                                        StandardCharsets.UTF_8)
                                + Files.readString(
                                        image.resolve("taskmanager-1-log/taskmanager.log"),
                                        StandardCharsets.UTF_8))
                .as("the TaskManagers ran Clonos's tasks")
                .contains("causal logging on");
    }

    /**
     * Copies what the Dockerfile's COPY lines copy and makes its mkdir directories, under {@link
     * #image}; returns its ENV, rebased on {@link #image}.
     */
    private Map<String, String> layOut(List<String> dockerfile) throws IOException {
        Map<String, String> env = new HashMap<>();
        String joined = String.join("\n", dockerfile).replace("\\\n", " ");
        for (String line : joined.split("\n")) {
            String[] words = line.trim().split("\\s+");
            if (words[0].equals("COPY")) {
                Path from = Paths.get("..").resolve(words[1]);
                Path to = image.resolve(words[2].substring(1));
                if (Files.isDirectory(from)) {
                    copyTree(from, to);
                } else {
                    Files.createDirectories(to.getParent());
                    Files.copy(from, to, StandardCopyOption.COPY_ATTRIBUTES);
                }
            } else if (words[0].equals("ENV")) {
                Matcher pair = Pattern.compile("(\\w+)=(\\S+)").matcher(line);
                while (pair.find()) {
                    env.put(pair.group(1), pair.group(2));
                }
            } else if (words[0].equals("RUN")) {
                Matcher mkdir = Pattern.compile("mkdir -p ([^&]+)").matcher(line);
                if (mkdir.find()) {
                    for (String dir : mkdir.group(1).trim().split("\\s+")) {
                        Files.createDirectories(image.resolve(dir.substring(1)));
                    }
                }
            }
        }
        env.replaceAll(
                (key, value) ->
                        value.startsWith("/")
                                ? image.resolve(value.substring(1)).toString()
                                : value);
        return env;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path file : files.toList()) {
                Path target = to.resolve(from.relativize(file).toString());
                if (Files.isDirectory(file)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(file, target, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    private void container(Map<String, String> env, String name, Path entrypoint, List<String> args)
            throws IOException {
        List<String> command = new ArrayList<>();
        command.add(name.startsWith("taskmanager") ? "taskmanager" : name);
        command.addAll(args);
        ProcessBuilder builder = builder(env, entrypoint, command);
        // each container has a file system of its own; here they share one, so not its log
        // directory
        builder.environment().put("CLONOS_LOG_DIR", image.resolve(name + "-log").toString());
        builder.redirectErrorStream(true);
        builder.redirectOutput(image.resolve(name + ".out").toFile());
        builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        containers.add(builder.start());
    }

    private static ProcessBuilder builder(
            Map<String, String> env, Path entrypoint, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(entrypoint.toString());
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("CLONOS_HOME", env.get("CLONOS_HOME"));
        builder.environment().put("CLONOS_LOG_DIR", env.get("CLONOS_LOG_DIR"));
        builder.environment().put("CLONOS_RUN_DIR", env.get("CLONOS_RUN_DIR"));
        return builder;
    }

    private void awaitTaskManagers(ClusterRestClient rest, int count) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (System.nanoTime() < deadline) {
            for (Process container : containers) {
                assertThat(container.isAlive()).as("a container exited; see %s", image).isTrue();
            }
            int registered =
                    rest.tryGet("/taskmanagers")
                            .map(json -> json.get("taskmanagers").size())
                            .orElse(0);
            if (registered >= count) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the TaskManagers did not register; see " + image);
    }
}
