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

import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.entrypoint.ClonosApplicationClusterEntrypoint;
import io.clonos.runtime.entrypoint.ClonosClusterConfiguration;
import io.clonos.runtime.entrypoint.ClonosSessionClusterEntrypoint;
import io.clonos.runtime.entrypoint.ClonosTaskManagerRunner;
import io.clonos.runtime.inflightlog.InFlightLogs;
import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;
import org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint;
import org.apache.flink.runtime.jobmanager.JobManagerProcessSpec;
import org.apache.flink.runtime.jobmanager.JobManagerProcessUtils;
import org.apache.flink.runtime.taskexecutor.TaskManagerRunner;
import org.apache.flink.runtime.util.config.memory.ProcessMemoryUtils;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A standalone Clonos session cluster of separate JVM processes on this machine: one JobManager and
 * N TaskManagers with resource ids {@code tm-0} … {@code tm-(N-1)}. Each process has a pid file in
 * the run directory, so that a TaskManager can be killed (SIGKILL) to test recovery, and a log file
 * in the log directory. JVM memory flags are derived from the configuration with Flink's own
 * process-memory model, as Flink's scripts do.
 */
@Internal
public final class StandaloneCluster {

    /** Which system the processes run: Clonos, or vanilla Flink for a side-by-side experiment. */
    public enum Flavour {
        /** Clonos's entrypoints and configuration (shuffle service, scheduler, job rewriting). */
        CLONOS(ClonosSessionClusterEntrypoint.class, ClonosTaskManagerRunner.class),
        /** Flink's own entrypoints and the same jars and settings, without Clonos. */
        FLINK(StandaloneSessionClusterEntrypoint.class, TaskManagerRunner.class);

        private final String jobManager;
        private final String taskManager;

        Flavour(Class<?> jobManager, Class<?> taskManager) {
            this.jobManager = jobManager.getName();
            this.taskManager = taskManager.getName();
        }
    }

    static final String JOBMANAGER = "jobmanager";
    static final String TASKMANAGER_PREFIX = "tm-";

    private static final Duration START_TIMEOUT = Duration.ofMinutes(2);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

    private static final List<String> JVM_OPENS =
            List.of(
                    "--add-opens=java.base/java.util=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang=ALL-UNNAMED",
                    "--add-opens=java.base/java.net=ALL-UNNAMED",
                    "--add-opens=java.base/java.io=ALL-UNNAMED",
                    "--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED");

    private final ClonosHome home;
    private final PrintStream out;
    private final Flavour flavour;

    /** Hadoop's jars for the cluster processes, after {@code lib/}; null for none. */
    private String hadoopClassPath =
            System.getenv().getOrDefault("HADOOP_CLASSPATH", "").isBlank()
                    ? null
                    : System.getenv("HADOOP_CLASSPATH");

    public StandaloneCluster(ClonosHome home, PrintStream out) {
        this(home, out, Flavour.CLONOS);
    }

    public StandaloneCluster(ClonosHome home, PrintStream out, Flavour flavour) {
        this.home = home;
        this.out = out;
        this.flavour = flavour;
    }

    /** Starts the processes and waits until every TaskManager has registered. */
    public void start(Map<String, String> dynamicProperties, int taskManagers, int slots)
            throws Exception {
        start(dynamicProperties, taskManagers, slots, false);
    }

    /**
     * The same; with {@code application}, the JobManager is an application cluster's, which runs
     * the job its configuration names ({@code $internal.application.main}) and ends with it.
     */
    public void start(
            Map<String, String> dynamicProperties, int taskManagers, int slots, boolean application)
            throws Exception {
        if (application && flavour != Flavour.CLONOS) {
            throw new IllegalArgumentException("Application clusters are Clonos clusters here");
        }
        Configuration config = home.loadConfiguration(dynamicProperties);
        config.set(TaskManagerOptions.NUM_TASK_SLOTS, slots);
        withDefaultProcessMemory(config);
        prepare(config);

        Files.createDirectories(home.runDir());
        Files.createDirectories(home.logDir());
        List<String> running = runningProcesses();
        if (!running.isEmpty()) {
            throw new IllegalStateException(
                    "A cluster is already running from "
                            + home.runDir()
                            + ": "
                            + running
                            + ". Stop it first.");
        }

        Map<String, String> clusterProperties = new LinkedHashMap<>(dynamicProperties);
        clusterProperties.put(TaskManagerOptions.NUM_TASK_SLOTS.key(), String.valueOf(slots));

        JobManagerProcessSpec jmSpec =
                JobManagerProcessUtils.processSpecFromConfigWithNewOptionToInterpretLegacyHeap(
                        config, JobManagerOptions.JVM_HEAP_MEMORY);
        launch(
                JOBMANAGER,
                JobManagerProcessUtils.generateJvmParametersStr(jmSpec, config),
                ProcessJavaOptions.jobManager(config, logPrefix(JOBMANAGER)),
                application
                        ? ClonosApplicationClusterEntrypoint.class.getName()
                        : flavour.jobManager,
                clusterProperties,
                JobManagerProcessUtils.generateDynamicConfigsStr(jmSpec));

        for (int i = 0; i < taskManagers; i++) {
            launchTaskManager(config, clusterProperties, TASKMANAGER_PREFIX + i);
        }

        ClusterRestClient rest = restClient(config);
        if (!awaitTaskManagers(rest, taskManagers, application)) {
            out.printf(
                    "Clonos application cluster started and its application completed already; logs in %s%n",
                    home.logDir());
            return;
        }
        out.printf(
                "%s cluster started: 1 JobManager, %d TaskManagers x %d slots. REST and web UI at %s%n",
                flavour == Flavour.CLONOS
                        ? (application ? "Clonos application" : "Clonos")
                        : "Flink",
                taskManagers,
                slots,
                rest.address());
        out.printf("Pid files in %s, logs in %s%n", home.runDir(), home.logDir());
    }

    /**
     * Starts one more TaskManager, named {@code name} (its resource id), with the cluster's
     * configuration and {@code slots} slots: a replacement for a lost one.
     */
    void startTaskManager(Map<String, String> dynamicProperties, int slots, String name)
            throws IOException {
        Configuration config = home.loadConfiguration(dynamicProperties);
        config.set(TaskManagerOptions.NUM_TASK_SLOTS, slots);
        withDefaultProcessMemory(config);
        prepare(config);
        Map<String, String> clusterProperties = new LinkedHashMap<>(dynamicProperties);
        clusterProperties.put(TaskManagerOptions.NUM_TASK_SLOTS.key(), String.valueOf(slots));
        launchTaskManager(config, clusterProperties, name);
    }

    /** The pid of a process of the cluster (as {@code cluster start} named it), if it runs. */
    public Optional<ProcessHandle> process(String name) {
        return readPid(home.runDir().resolve(name + ".pid"))
                .flatMap(ProcessHandle::of)
                .filter(ProcessHandle::isAlive);
    }

    private void launchTaskManager(
            Configuration config, Map<String, String> clusterProperties, String name)
            throws IOException {
        TaskExecutorProcessSpec tmSpec = TaskExecutorProcessUtils.processSpecFromConfig(config);
        Map<String, String> tmProperties = new LinkedHashMap<>(clusterProperties);
        tmProperties.put(TaskManagerOptions.TASK_MANAGER_RESOURCE_ID.key(), name);
        String jvmParameters = ProcessMemoryUtils.generateJvmParametersStr(tmSpec);
        if (flavour == Flavour.CLONOS) {
            jvmParameters = withInFlightLogHeap(jvmParameters, config, tmSpec);
        }
        launch(
                name,
                jvmParameters,
                ProcessJavaOptions.taskManager(config, logPrefix(name)),
                flavour.taskManager,
                tmProperties,
                TaskExecutorProcessUtils.generateDynamicConfigsStr(tmSpec));
    }

    /**
     * The TaskManager's JVM flags with the heap grown by {@code clonos.in-flight-log.memory}:
     * Flink's memory model sizes the heap for Flink's own use, and the in-flight logs would
     * otherwise take their memory from the task heap the job was sized for. An {@code in-memory}
     * log's overdraft, as much as the TaskManager's network memory, counts too.
     */
    static String withInFlightLogHeap(
            String jvmParameters, Configuration config, TaskExecutorProcessSpec tmSpec) {
        long extra =
                InFlightLogs.maxHeapBytes(
                        ClonosConfiguration.fromConfiguration(config),
                        tmSpec.getNetworkMemSize().getBytes());
        if (extra == 0) {
            return jvmParameters;
        }
        Matcher heap = Pattern.compile("-Xm([xs])(\\d+)").matcher(jvmParameters);
        StringBuilder grown = new StringBuilder();
        while (heap.find()) {
            heap.appendReplacement(
                    grown, "-Xm" + heap.group(1) + (Long.parseLong(heap.group(2)) + extra));
        }
        heap.appendTail(grown);
        return grown.toString();
    }

    /**
     * Stops every process of the cluster: TaskManagers first, SIGTERM, then SIGKILL after a grace
     * period.
     */
    public void stop() throws IOException {
        List<Path> pidFiles = pidFiles();
        if (pidFiles.isEmpty()) {
            out.println("No Clonos cluster is running from " + home.runDir());
            return;
        }
        pidFiles.sort((a, b) -> Boolean.compare(isJobManager(a), isJobManager(b)));
        for (Path pidFile : pidFiles) {
            String name = processName(pidFile);
            Optional<ProcessHandle> process = readPid(pidFile).flatMap(ProcessHandle::of);
            if (process.isPresent() && process.get().isAlive()) {
                process.get().destroy();
                try {
                    process.get().onExit().get(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (Exception e) {
                    process.get().destroyForcibly();
                }
                out.println("Stopped " + name + " (pid " + process.get().pid() + ")");
            } else {
                out.println(name + " was not running");
            }
            Files.deleteIfExists(pidFile);
        }
    }

    private boolean applicationCompleted() throws IOException {
        Path log = home.logDir().resolve(JOBMANAGER + ".log");
        return Files.exists(log)
                && Files.readString(log, StandardCharsets.UTF_8)
                        .contains("Application completed SUCCESSFULLY");
    }

    /** Prints which processes run and, if the JobManager answers, the cluster overview. */
    void status(Map<String, String> dynamicProperties) throws IOException {
        List<Path> pidFiles = pidFiles();
        if (pidFiles.isEmpty()) {
            out.println("No Clonos cluster is running from " + home.runDir());
            return;
        }
        for (Path pidFile : pidFiles) {
            Optional<Long> pid = readPid(pidFile);
            boolean alive =
                    pid.flatMap(ProcessHandle::of).map(ProcessHandle::isAlive).orElse(false);
            out.printf(
                    "%-12s pid %-8s %s%n",
                    processName(pidFile),
                    pid.map(String::valueOf).orElse("?"),
                    alive ? "running" : "not running");
        }
        ClusterRestClient rest =
                restClient(withDefaultProcessMemory(home.loadConfiguration(dynamicProperties)));
        Optional<JsonNode> overview = rest.tryGet("/overview");
        if (overview.isPresent()) {
            JsonNode o = overview.get();
            out.printf(
                    "REST %s: %d TaskManagers, %d/%d slots free, %d jobs running, %d finished%n",
                    rest.address(),
                    o.path("taskmanagers").asInt(),
                    o.path("slots-available").asInt(),
                    o.path("slots-total").asInt(),
                    o.path("jobs-running").asInt(),
                    o.path("jobs-finished").asInt());
        } else {
            out.println("REST " + rest.address() + " does not answer");
        }
    }

    /** Clonos's checks and derived settings; Flink's processes get the configuration as it is. */
    private void prepare(Configuration config) {
        if (flavour == Flavour.CLONOS) {
            ClonosClusterConfiguration.prepare(config);
        }
    }

    public static ClusterRestClient restClient(Configuration config) {
        return ClusterRestClient.of(
                config.get(RestOptions.ADDRESS, "localhost"), config.get(RestOptions.PORT));
    }

    private static Configuration withDefaultProcessMemory(Configuration config) {
        if (Stream.of(
                        JobManagerOptions.TOTAL_PROCESS_MEMORY,
                        JobManagerOptions.TOTAL_FLINK_MEMORY,
                        JobManagerOptions.JVM_HEAP_MEMORY)
                .noneMatch(config::contains)) {
            config.set(JobManagerOptions.TOTAL_PROCESS_MEMORY, MemorySize.parse("1024m"));
        }
        if (Stream.of(
                        TaskManagerOptions.TOTAL_PROCESS_MEMORY,
                        TaskManagerOptions.TOTAL_FLINK_MEMORY,
                        TaskManagerOptions.TASK_HEAP_MEMORY)
                .noneMatch(config::contains)) {
            config.set(TaskManagerOptions.TOTAL_PROCESS_MEMORY, MemorySize.parse("1280m"));
        }
        return config;
    }

    private void launch(
            String name,
            String jvmMemoryParameters,
            List<String> javaOptions,
            String mainClass,
            Map<String, String> dynamicProperties,
            String memoryDynamicConfigs)
            throws IOException {
        List<String> command =
                command(
                        name,
                        jvmMemoryParameters,
                        javaOptions,
                        mainClass,
                        dynamicProperties,
                        memoryDynamicConfigs);
        Path stdout = home.logDir().resolve(name + ".out");
        Process process =
                new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(stdout.toFile())
                        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                        .start();
        Files.writeString(
                home.runDir().resolve(name + ".pid"),
                String.valueOf(process.pid()),
                StandardCharsets.UTF_8);
    }

    /** The log file of process {@code name} without its extension: Flink's log prefix. */
    private Path logPrefix(String name) {
        return home.logDir().resolve(name);
    }

    /** The JVM command of one of the cluster's processes, named {@code name}. */
    private List<String> command(
            String name,
            String jvmMemoryParameters,
            List<String> javaOptions,
            String mainClass,
            Map<String, String> dynamicProperties,
            String memoryDynamicConfigs) {
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JVM_OPENS);
        command.addAll(Arrays.asList(jvmMemoryParameters.trim().split("\\s+")));
        command.addAll(javaOptions);
        command.add("-Dlog.file=" + home.logDir().resolve(name + ".log"));
        command.add("-Dlog4j.configurationFile=" + home.confDir().resolve("log4j.properties"));
        command.add("-Dclonos.home=" + home.home());
        command.add("-cp");
        command.add(clusterClassPath());
        command.add(mainClass);
        command.add("--configDir");
        command.add(home.confDir().toString());
        dynamicProperties.forEach(
                (key, value) -> {
                    command.add("-D");
                    command.add(key + "=" + value);
                });
        command.addAll(Arrays.asList(memoryDynamicConfigs.trim().split("\\s+")));
        return command;
    }

    /**
     * The command of one process of a cluster whose processes are started one by one, each in the
     * foreground (a container's): {@code role} jobmanager, application (a JobManager that runs the
     * job of {@code $internal.application.main}) or taskmanager, with the JVM flags of Flink's
     * process-memory model, as {@link #start} launches them.
     */
    List<String> foregroundCommand(String role, Map<String, String> dynamicProperties) {
        Configuration config = home.loadConfiguration(dynamicProperties);
        withDefaultProcessMemory(config);
        prepare(config);
        switch (role) {
            case "jobmanager":
            case "application":
                JobManagerProcessSpec jmSpec =
                        JobManagerProcessUtils
                                .processSpecFromConfigWithNewOptionToInterpretLegacyHeap(
                                        config, JobManagerOptions.JVM_HEAP_MEMORY);
                return command(
                        JOBMANAGER,
                        JobManagerProcessUtils.generateJvmParametersStr(jmSpec, config),
                        ProcessJavaOptions.jobManager(config, logPrefix(JOBMANAGER)),
                        role.equals("application")
                                ? ClonosApplicationClusterEntrypoint.class.getName()
                                : flavour.jobManager,
                        dynamicProperties,
                        JobManagerProcessUtils.generateDynamicConfigsStr(jmSpec));
            case "taskmanager":
                TaskExecutorProcessSpec tmSpec =
                        TaskExecutorProcessUtils.processSpecFromConfig(config);
                String jvm = ProcessMemoryUtils.generateJvmParametersStr(tmSpec);
                return command(
                        "taskmanager",
                        flavour == Flavour.CLONOS ? withInFlightLogHeap(jvm, config, tmSpec) : jvm,
                        ProcessJavaOptions.taskManager(config, logPrefix("taskmanager")),
                        flavour.taskManager,
                        dynamicProperties,
                        TaskExecutorProcessUtils.generateDynamicConfigsStr(tmSpec));
            default:
                throw new IllegalArgumentException(
                        "A process is a jobmanager, an application or a taskmanager, not " + role);
        }
    }

    /**
     * The distribution's {@code lib/}, as Flink's scripts give its processes: not the launcher's
     * own class path, which may hold what jobs bring themselves (the example jobs {@code chaos}
     * loads to judge their output, a test's connectors); a class the cluster holds is loaded
     * parent-first and clashes with the job's copy of what it refers to.
     */
    private String clusterClassPath() {
        String lib = home.home().resolve("lib").toAbsolutePath() + File.separator + "*";
        return hadoopClassPath == null ? lib : lib + File.pathSeparator + hadoopClassPath;
    }

    /**
     * Gives the cluster's processes Hadoop's file systems (HDFS checkpoints), as Flink's {@code
     * HADOOP_CLASSPATH} does; before {@link #start}.
     */
    public StandaloneCluster withHadoop(String classPath) {
        this.hadoopClassPath = classPath;
        return this;
    }

    /**
     * Waits until the TaskManagers registered (true); false when an application cluster's
     * JobManager ended first because its application completed (a short job can).
     */
    private boolean awaitTaskManagers(ClusterRestClient rest, int taskManagers, boolean application)
            throws Exception {
        Instant deadline = Instant.now().plus(START_TIMEOUT);
        while (Instant.now().isBefore(deadline)) {
            for (Path pidFile : pidFiles()) {
                boolean alive =
                        readPid(pidFile)
                                .flatMap(ProcessHandle::of)
                                .map(ProcessHandle::isAlive)
                                .orElse(false);
                if (!alive) {
                    String name = processName(pidFile);
                    if (application && isJobManager(pidFile) && applicationCompleted()) {
                        return false;
                    }
                    Path log = home.logDir().resolve(name + ".out");
                    stop();
                    throw new IllegalStateException(
                            name
                                    + " exited during start-up. Its output ("
                                    + log
                                    + "):\n"
                                    + tail(log));
                }
            }
            int registered =
                    rest.tryGet("/overview").map(o -> o.path("taskmanagers").asInt()).orElse(-1);
            if (registered >= taskManagers) {
                return true;
            }
            Thread.sleep(250);
        }
        stop();
        throw new IllegalStateException(
                "The cluster did not come up within "
                        + START_TIMEOUT.toSeconds()
                        + " s; see the logs in "
                        + home.logDir());
    }

    private List<String> runningProcesses() throws IOException {
        return pidFiles().stream()
                .filter(
                        f ->
                                readPid(f)
                                        .flatMap(ProcessHandle::of)
                                        .map(ProcessHandle::isAlive)
                                        .orElse(false))
                .map(StandaloneCluster::processName)
                .collect(Collectors.toList());
    }

    private List<Path> pidFiles() throws IOException {
        if (!Files.isDirectory(home.runDir())) {
            return new ArrayList<>();
        }
        try (Stream<Path> files = Files.list(home.runDir())) {
            return files.filter(f -> f.getFileName().toString().endsWith(".pid"))
                    .sorted()
                    .collect(Collectors.toList());
        }
    }

    private static Optional<Long> readPid(Path pidFile) {
        try {
            return Optional.of(Long.parseLong(Files.readString(pidFile).trim()));
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static String processName(Path pidFile) {
        String file = pidFile.getFileName().toString();
        return file.substring(0, file.length() - ".pid".length());
    }

    private static boolean isJobManager(Path pidFile) {
        return processName(pidFile).equals(JOBMANAGER);
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return "(no output)";
        }
    }
}
