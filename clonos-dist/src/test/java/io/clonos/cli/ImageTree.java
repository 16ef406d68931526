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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Clonos image without a container runtime: its file tree laid out from the repository the way
 * {@code deploy/k8s/image/Dockerfile} copies it (its COPY, ENV and mkdir lines), and its containers
 * run as processes of the image's entrypoint from that tree. The containers share one file system
 * and one network here, so each gets a log directory of its own and the callers give them ports
 * that do not clash.
 */
final class ImageTree implements AutoCloseable {

    private static final Path DOCKERFILE = Paths.get("..", "deploy", "k8s", "image", "Dockerfile");

    final Path root;

    /** The image's ENV, rebased on {@link #root}. */
    final Map<String, String> env;

    final Path home;
    final Path entrypoint;
    private final Map<String, Process> containers = new LinkedHashMap<>();

    private ImageTree(Path root, Map<String, String> env) {
        this.root = root;
        this.env = env;
        this.home = Paths.get(env.get("CLONOS_HOME"));
        this.entrypoint = home.resolve("bin/docker-entrypoint.sh");
    }

    /** Copies what the Dockerfile's COPY lines copy and makes its mkdir directories under root. */
    static ImageTree layOut(Path root) throws IOException {
        Map<String, String> env = new HashMap<>();
        String joined =
                String.join("\n", Files.readAllLines(DOCKERFILE, StandardCharsets.UTF_8))
                        .replace("\\\n", " ");
        for (String line : joined.split("\n")) {
            String[] words = line.trim().split("\\s+");
            if (words[0].equals("COPY")) {
                Path from = Paths.get("..").resolve(words[1]);
                Path to = root.resolve(words[2].substring(1));
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
                        Files.createDirectories(root.resolve(dir.substring(1)));
                    }
                }
            }
        }
        env.replaceAll(
                (key, value) ->
                        value.startsWith("/")
                                ? root.resolve(value.substring(1)).toString()
                                : value);
        return new ImageTree(root, env);
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

    /**
     * Starts container {@code name} with the entrypoint's {@code args} (its role first) and {@code
     * extraEnv} beside the image's ENV; its output goes to {@code <name>.out} under root.
     */
    Process container(String name, List<String> args, Map<String, String> extraEnv)
            throws IOException {
        ProcessBuilder builder = command(args);
        builder.environment().putAll(extraEnv);
        builder.environment().put("CLONOS_LOG_DIR", root.resolve(name + "-log").toString());
        builder.redirectErrorStream(true);
        builder.redirectOutput(root.resolve(name + ".out").toFile());
        builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Process process = builder.start();
        containers.put(name, process);
        return process;
    }

    /**
     * A one-node ZooKeeper on {@code port}, run from the image's class path (Flink's shaded
     * ZooKeeper, as a HA cluster's ensemble would run it in a pod of its own), with a tick of 500
     * ms so that sessions may time out within seconds.
     */
    Process zooKeeper(int port) throws IOException {
        ProcessBuilder builder =
                new ProcessBuilder(
                        Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        home.resolve("lib").toString() + "/*",
                        "org.apache.flink.shaded.zookeeper3.org.apache.zookeeper.server.ZooKeeperServerMain",
                        String.valueOf(port),
                        Files.createDirectories(root.resolve("zookeeper-data")).toString(),
                        "500");
        builder.redirectErrorStream(true);
        builder.redirectOutput(root.resolve("zookeeper.out").toFile());
        builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Process process = builder.start();
        containers.put("zookeeper", process);
        return process;
    }

    /** The entrypoint with {@code args}, in the image's environment. */
    ProcessBuilder command(List<String> args) {
        ProcessBuilder builder = new ProcessBuilder(commandLine(args));
        builder.environment().putAll(environment());
        return builder;
    }

    private List<String> commandLine(List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(entrypoint.toString());
        command.addAll(args);
        return command;
    }

    /** What the image's ENV gives the entrypoint. */
    private Map<String, String> environment() {
        return Map.of(
                "CLONOS_HOME", env.get("CLONOS_HOME"),
                "CLONOS_LOG_DIR", env.get("CLONOS_LOG_DIR"),
                "CLONOS_RUN_DIR", env.get("CLONOS_RUN_DIR"));
    }

    /**
     * Submits the hash-chain job through the image's entrypoint to the JobManager's REST port
     * ({@code count} numbers per source at {@code rate} a second, 8 keys, a checkpoint every {@code
     * checkpointMillis} ms, its links in {@code output}); returns the job's id.
     */
    String submitHashChainJob(
            int restPort, long count, int rate, long checkpointMillis, Path output)
            throws Exception {
        return submitHashChainJob(restPort, count, rate, checkpointMillis, output, List.of());
    }

    /** The same, with {@code settings} ({@code -D key=value} ...) for the client. */
    String submitHashChainJob(
            int restPort,
            long count,
            int rate,
            long checkpointMillis,
            Path output,
            List<String> settings)
            throws Exception {
        List<String> run = new ArrayList<>(List.of("run", "--detached"));
        run.addAll(settings);
        run.addAll(
                List.of(
                        "-D",
                        "rest.address=localhost",
                        "-D",
                        "rest.port=" + restPort,
                        "--class",
                        HashChainJob.class.getName(),
                        home.resolve("examples/clonos-examples.jar").toString(),
                        "--count",
                        String.valueOf(count),
                        "--rate",
                        String.valueOf(rate),
                        "--keys",
                        "8",
                        "--checkpoint-interval",
                        String.valueOf(checkpointMillis),
                        "--output",
                        output.toString()));
        CliRun.Result submitted =
                CliRun.run(commandLine(run), environment(), Duration.ofMinutes(2));
        assertThat(submitted.exitCode()).as(submitted.stdout()).isZero();
        return submitted.jobId();
    }

    /** A container's log file, e.g. {@code taskmanager.log}. */
    String log(String name, String file) throws IOException {
        return Files.readString(root.resolve(name + "-log").resolve(file), StandardCharsets.UTF_8);
    }

    /** Kills a container as a node's death does: SIGKILL to every process in it, at once. */
    void kill(String name) {
        Process container = containers.get(name);
        List<ProcessHandle> all = new ArrayList<>(container.descendants().toList());
        all.add(container.toHandle());
        all.forEach(ProcessHandle::destroyForcibly);
    }

    /** Waits until {@code count} TaskManagers registered; fails if a container exited. */
    void awaitTaskManagers(ClusterRestClient rest, int count) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (System.nanoTime() < deadline) {
            containers.forEach(
                    (name, process) ->
                            assertThat(process.isAlive())
                                    .as("container %s exited; see %s", name, root)
                                    .isTrue());
            int registered =
                    rest.tryGet("/taskmanagers")
                            .map(json -> json.get("taskmanagers").size())
                            .orElse(0);
            if (registered >= count) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the TaskManagers did not register; see " + root);
    }

    @Override
    public void close() throws Exception {
        for (Process container : containers.values()) {
            container.destroy();
        }
        for (Process container : containers.values()) {
            assertThat(container.waitFor(1, TimeUnit.MINUTES)).as("the container stopped").isTrue();
        }
    }
}
