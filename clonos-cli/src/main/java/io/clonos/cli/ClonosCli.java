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

import io.clonos.examples.Shape;
import io.clonos.examples.chaos.ChaosPlan;
import io.clonos.examples.chaos.ChaosVerdict;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.IllegalConfigurationException;

import java.io.File;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.LongFunction;

/**
 * {@code bin/clonos}: start and stop a standalone Clonos cluster, submit unchanged Flink jobs to
 * it, and run the demo on an embedded cluster. Exit codes: 0 success, 1 failure, 2 bad usage.
 */
@Internal
public final class ClonosCli {

    static final String USAGE =
            String.join(
                    "\n",
                    "Usage: clonos <command> [options]",
                    "",
                    "  process jobmanager|application|taskmanager [--conf-dir DIR] [-D key=value ...]",
                    "        One process of a cluster in the foreground (a container's entrypoint runs this).",
                    "  cluster start [--taskmanagers N] [--slots S] [--conf-dir DIR] [-D key=value ...]",
                    "        [--application CLASS [--application-args 'ARG ...']]: an application cluster that runs",
                    "        the job of CLASS (its jar in usrlib/) and ends with it.",
                    "        Start a standalone session cluster on this machine: 1 JobManager and N",
                    "        TaskManagers (tm-0 ... tm-N-1) as separate JVMs (default N=2, S=2).",
                    "  cluster stop [--conf-dir DIR]",
                    "  cluster status [--conf-dir DIR] [-D key=value ...]",
                    "  run [--detached] [--class CLASS] [--conf-dir DIR] [-D key=value ...] JAR [ARGS ...]",
                    "        Submit an unchanged Flink job jar to the cluster over Flink's REST API.",
                    "  sql [-f FILE.sql] [-i INIT.sql] [-D key=value ...] [Flink SQL client options]",
                    "        Flink's SQL client against the cluster of conf/config.yaml (rest.address, rest.port).",
                    "  fail --job ID --vertex NAME --subtask I [--conf-dir DIR] [-D key=value ...]",
                    "        Fail one running task through the JobManager (failure experiments).",
                    "  bench recovery [--records N] [--rate R] [--keys K] [--state-kb S] [--checkpoint-interval MS]",
                    "        [--kill-after MS] [--output DIR]",
                    "        Kill a TaskManager under the synthetic job, on Clonos and on Flink, and compare.",
                    "        With --processes separate [--repetitions R] [--taskmanagers N] [--load F] [--hdfs]",
                    "        [--failures one|concurrent|staggered] [--parallelism P] [-D key=value ...]:",
                    "        clusters of separate JVMs (Clonos, then vanilla Flink, alternating), TaskManagers killed",
                    "        with SIGKILL (one; three at once; three 5 s apart); medians, spread and where the time",
                    "        went. --hdfs: checkpoints to HDFS in a process of its own.",
                    "  bench standby [--records N] [--rate R] [--keys K] [--state-kb S] [--checkpoint-interval MS]",
                    "        [--kill-after MS] [--repetitions R] [--checkpoint-dir URI] [--output DIR]",
                    "        Kill a TaskManager under the synthetic job with RocksDB state, with and without standbys",
                    "        (R times each, alternating; medians).",
                    "  bench in-flight-log [--megabytes M] [--memory-mb M] [--epoch-mb M] [--prefetch P] [--repetitions R]",
                    "        Append and replay throughput of the in-flight log, in memory and under each spill policy.",
                    "  bench overhead [--records N] [--keys K] [--state-bytes B] [--repetitions R] [--checkpoint-interval MS]",
                    "        [--warmup-seconds S] [--warmup-rate R] [--user-code] [--one-jvm] [--output DIR] [-D key=value ...]",
                    "        (-D: settings of the Clonos clusters; --warmup-rate: the sources held to R records/s for the",
                    "        warm-up but its last 2 s, so that the JIT compilers get CPU; --user-code: also DSD full with the",
                    "        job's classes in a job jar, their clock reads rewritten into causal calls and not)",
                    "        Throughput, latency and CPU per record (also by thread group) of the synthetic job without failures,",
                    "        Clonos against Flink, over each run's steady state (defaults: 40000000 records, 5 s warm-up,",
                    "        checkpoints every 5 s),",
                    "        each run in a JVM of its own (--one-jvm: all in this one, after a warm-up run of each system).",
                    "  bench inflight [--records N] [--repetitions R] [--checkpoint-intervals MS,MS] [--logs L,L]",
                    "        [--dsd D] [--warmup-seconds S] [--one-jvm] [--output DIR] [-D key=value ...]",
                    "        The same, with each in-flight log (availability, eager, epoch, in-memory, disabled) against",
                    "        Flink at each checkpoint interval (defaults: all but disabled, DSD 0, 5000,60000 ms).",
                    "  bench pod-failure [--namespace NS] [--kubernetes-api URL] [--records N] [--rate R]",
                    "        [--checkpoint-interval MS] [--timeout-seconds S] [--job-output DIR] [--output DIR] [-D key=value ...]",
                    "        In a pod of a Clonos session cluster on Kubernetes (the chart's experiment.killPod): submit the",
                    "        hash-chain job to the cluster (rest.address), delete a TaskManager pod through the Kubernetes",
                    "        API once a checkpoint completed, and check which subtasks restarted and that the output is",
                    "        exactly once (exit 0 if so and local); prints and writes pod-failure.json.",
                    "  bench output-latency [--checkpoint-intervals MS,MS] [--seconds S] [--load F | --rate N]",
                    "        [--repetitions R] [--output DIR]",
                    "        Event-to-visible latency at a read_committed consumer (p50, p99, p99.9) and throughput of",
                    "        one job writing to Kafka through ClonosKafkaSink and through Flink's KafkaSink EXACTLY_ONCE",
                    "        at each checkpoint interval, alternating (broker and cluster in this JVM; defaults:",
                    "        1000,5000,30000 ms, 40 s, load 0.5 of the capacity measured first, 3 repetitions,",
                    "        bench-results/output-latency). Last line: JSON with the medians per variant.",
                    "  nexmark overhead [--queries Q,...] [--warmup-seconds W] [--steady-seconds S] [--repetitions R] [--output DIR]",
                    "        Beam's Nexmark queries on Flink and on Clonos (DSD 1 and full): throughput and",
                    "        latency (p50, p99); CSV, JSON and an HTML chart (bin/clonos nexmark for its options).",
                    "  nexmark failure --query 3|8|synthetic [--load F | --rate N] [--failures one|concurrent|staggered] ...",
                    "        Q3, Q8 or the paper's synthetic job between Kafka topics, TaskManagers lost midway, on Clonos and on",
                    "        Flink: output checked against a failure-free run, recovery times, timelines.",
                    "  chaos [--seed S] [--runs N] [--minutes M] [--taskmanagers N] [--slots S] [--output DIR]",
                    "        [--shape STAGES --source-parallelism P --dsd D --kills K --stagger-ms MS]",
                    "        [--splits-per-subtask N | --chained-sources] [--checkpoint-interval MS]",
                    "        [--recovery-bound-ms MS] [-D key=value ...]",
                    "        Generated jobs on a standalone cluster of its own (slots spread), TaskManagers killed",
                    "        with SIGKILL at random times; each run judged exactly once, local and in time. Seeds",
                    "        from S (random by default) on; a failed run's seed reproduces it. --shape fixes the job",
                    "        (e.g. keyby:timers:2/rebalance:map:2/keyby:state:2) and the failure; with",
                    "        --splits-per-subtask N each source reader interleaves N splits, as Kafka's readers do;",
                    "        with --chained-sources two sources are chained to an operator that merges them.",
                    "  hdfs [--dir DIR] [--port P]",
                    "        HDFS (a NameNode and a DataNode, Hadoop's mini cluster from opt/hadoop) in the foreground,",
                    "        for checkpoints of the experiments on separate processes (HADOOP_CLASSPATH=opt/hadoop/*).",
                    "  demo [--count N] [--rate R] [--keys K] [--no-failure] [-D key=value ...]",
                    "        Run the example job on an embedded Clonos cluster, fail one of its tasks",
                    "        midway, and check that only it was restarted and the results are right.",
                    "",
                    "Configuration: conf/config.yaml (Flink's file; Clonos keys under clonos.*),",
                    "overridden by -D. Environment: CLONOS_CONF_DIR, CLONOS_RUN_DIR, CLONOS_LOG_DIR.");

    private ClonosCli() {}

    /**
     * Whether {@code --help} or {@code -h} comes among a command's own arguments: before a job's
     * jar, whose arguments are the job's.
     */
    static boolean asksForHelp(String[] args) {
        for (String arg : args) {
            if (arg.endsWith(".jar")) {
                return false;
            }
            if (arg.equals("--help") || arg.equals("-h")) {
                return true;
            }
        }
        return false;
    }

    /**
     * A command that a module beside the launcher adds, run with the launcher's options, usage
     * errors and exit codes: {@code bin/clonos bench} is the benchmark module's, which the
     * distribution keeps in {@code opt/bench}, off the launcher's and the cluster's class path.
     */
    @Internal
    @FunctionalInterface
    public interface Command {
        /** Runs with the arguments after the command's name; returns the exit code. */
        int run(Deque<String> args, PrintStream out) throws Exception;
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err, Map.of()));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, out, err, Map.of());
    }

    /**
     * Runs the command that {@code args} name, among the launcher's and {@code added} (by name);
     * returns the exit code.
     */
    public static int run(
            String[] args, PrintStream out, PrintStream err, Map<String, Command> added) {
        if (asksForHelp(args)) {
            out.println(USAGE);
            return 0;
        }
        Deque<String> rest = new ArrayDeque<>(Arrays.asList(args));
        String command = rest.isEmpty() ? "help" : rest.poll();
        try {
            switch (command) {
                case "cluster":
                    return cluster(rest, out);
                case "run":
                    return runJob(rest);
                case "demo":
                    return demo(rest, out);
                case "fail":
                    return fail(rest, out);
                case "chaos":
                    return chaos(rest, out);
                case "process":
                    return process(rest);
                case "hdfs":
                    return hdfs(rest, out);
                case "sql-conf":
                    // bin/clonos sql's first step: the SQL client's configuration directory
                    if (rest.size() != 2) {
                        throw new UsageException("sql-conf takes a conf dir and a target dir.");
                    }
                    SqlClientConfiguration.write(Paths.get(rest.poll()), Paths.get(rest.poll()));
                    return 0;
                case "help":
                case "--help":
                case "-h":
                    out.println(USAGE);
                    return 0;
                default:
                    if (added.containsKey(command)) {
                        return added.get(command).run(rest, out);
                    }
                    if (command.equals("bench")) {
                        throw new UsageException(
                                "The benchmarks are not on this class path: bin/clonos bench runs"
                                        + " them with the distribution's opt/bench.");
                    }
                    throw new UsageException("Unknown command '" + command + "'.");
            }
        } catch (UsageException e) {
            err.println("clonos: " + e.getMessage());
            err.println(USAGE);
            return 2;
        } catch (IllegalConfigurationException e) {
            err.println("clonos: invalid configuration: " + e.getMessage());
            return 1;
        } catch (Exception e) {
            err.println("clonos: " + command + " failed: " + e);
            Throwable cause = e.getCause();
            while (cause != null) {
                err.println("  caused by: " + cause);
                cause = cause.getCause();
            }
            return 1;
        }
    }

    private static int cluster(Deque<String> args, PrintStream out) throws Exception {
        String action = args.poll();
        CliOptions options =
                CliOptions.parse(
                        args,
                        List.of(
                                "--taskmanagers",
                                "--slots",
                                "--conf-dir",
                                "--application",
                                "--application-args"),
                        List.of());
        options.requireNoPositional();
        ClonosHome home = ClonosHome.fromEnvironment(System.getenv(), options.value("--conf-dir"));
        StandaloneCluster cluster = new StandaloneCluster(home, out);
        if (options.value("--application-args") != null && options.value("--application") == null) {
            throw new UsageException("--application-args goes with --application.");
        }
        if ("start".equals(action)) {
            Map<String, String> properties = new LinkedHashMap<>(options.dynamicProperties);
            if (options.value("--application") != null) {
                properties.put("$internal.application.main", options.value("--application"));
                String programArgs = options.value("--application-args");
                if (programArgs != null && !programArgs.isBlank()) {
                    properties.put(
                            "$internal.application.program-args",
                            String.join(";", programArgs.trim().split("\\s+")));
                }
            }
            cluster.start(
                    properties,
                    options.intValue("--taskmanagers", 2, 1),
                    options.intValue("--slots", 2, 1),
                    options.value("--application") != null);
        } else if ("stop".equals(action)) {
            cluster.stop();
        } else if ("status".equals(action)) {
            cluster.status(options.dynamicProperties);
        } else {
            throw new UsageException("cluster needs start, stop or status.");
        }
        return 0;
    }

    /** HDFS in the foreground until the launcher is stopped; its files go with it. */
    private static int hdfs(Deque<String> args, PrintStream out) throws Exception {
        CliOptions options = CliOptions.parse(args, List.of("--dir", "--port"), List.of());
        options.requireNoPositional();
        Path dir = Path.of(options.values.getOrDefault("--dir", "hdfs"));
        Path home = ClonosHome.fromEnvironment(System.getenv(), null).home();
        HdfsProcess hdfs = HdfsProcess.start(home, dir, options.intValue("--port", 0, 0));
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    try {
                                        hdfs.close();
                                    } catch (Exception e) {
                                        System.err.println("Stopping HDFS: " + e);
                                    }
                                }));
        out.println("HDFS at " + hdfs.uri() + ", its files and hdfs.out in " + dir);
        out.println("Its clients need HADOOP_CLASSPATH=\"" + HdfsProcess.classPath(home) + "\"");
        Thread.currentThread().join();
        return 0;
    }

    /**
     * One process of the cluster in the foreground, as a container runs it: its exit is the
     * process's, and SIGTERM to this launcher stops it.
     */
    private static int process(Deque<String> args) throws Exception {
        String role = args.poll();
        CliOptions options = CliOptions.parse(args, List.of("--conf-dir"), List.of());
        options.requireNoPositional();
        if (role == null) {
            throw new UsageException(
                    "process needs a role: jobmanager, application or taskmanager.");
        }
        ClonosHome home = ClonosHome.fromEnvironment(System.getenv(), options.value("--conf-dir"));
        List<String> command;
        try {
            command =
                    new StandaloneCluster(home, System.out)
                            .foregroundCommand(role, options.dynamicProperties);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        Files.createDirectories(home.logDir());
        Process process = new ProcessBuilder(command).inheritIO().start();
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    process.destroy();
                                    try {
                                        process.waitFor();
                                    } catch (InterruptedException e) {
                                        Thread.currentThread().interrupt();
                                    }
                                }));
        return process.waitFor();
    }

    private static int runJob(Deque<String> args) throws Exception {
        CliOptions options =
                CliOptions.parse(args, List.of("--conf-dir", "--class"), List.of("--detached"));
        if (options.positional.isEmpty()) {
            throw new UsageException("run needs a job jar.");
        }
        ClonosHome home = ClonosHome.fromEnvironment(System.getenv(), options.value("--conf-dir"));
        List<String> jobArgs = options.positional.subList(1, options.positional.size());
        ProgramRunner.run(
                ProgramRunner.jobConfiguration(
                        home.loadConfiguration(options.dynamicProperties),
                        options.dynamicProperties.keySet()),
                options.flags.contains("--detached"),
                new File(options.positional.get(0)),
                options.value("--class"),
                jobArgs.toArray(new String[0]));
        return 0;
    }

    private static int fail(Deque<String> args, PrintStream out) throws Exception {
        CliOptions options =
                CliOptions.parse(
                        args, List.of("--job", "--vertex", "--subtask", "--conf-dir"), List.of());
        options.requireNoPositional();
        String job = options.required("--job");
        String vertex = options.required("--vertex");
        int subtask = options.intValue("--subtask", 0, 0);
        ClonosHome home = ClonosHome.fromEnvironment(System.getenv(), options.value("--conf-dir"));
        out.println(
                TaskFailer.fail(
                        home.loadConfiguration(options.dynamicProperties), job, vertex, subtask));
        return 0;
    }

    private static int chaos(Deque<String> args, PrintStream out) throws Exception {
        CliOptions options =
                CliOptions.parse(
                        args,
                        List.of(
                                "--seed",
                                "--runs",
                                "--minutes",
                                "--taskmanagers",
                                "--slots",
                                "--output",
                                "--conf-dir",
                                "--shape",
                                "--source-parallelism",
                                "--dsd",
                                "--kills",
                                "--stagger-ms",
                                "--splits-per-subtask",
                                "--checkpoint-interval",
                                "--recovery-bound-ms"),
                        List.of("--chained-sources"));
        options.requireNoPositional();
        long seed;
        try {
            seed =
                    options.value("--seed") == null
                            ? new Random().nextInt(1_000_000)
                            : Long.parseLong(options.value("--seed"));
        } catch (NumberFormatException e) {
            throw new UsageException(
                    "--seed needs an integer, got '" + options.value("--seed") + "'.");
        }
        double minutes = 0;
        if (options.value("--minutes") != null) {
            try {
                minutes = Double.parseDouble(options.value("--minutes"));
            } catch (NumberFormatException e) {
                minutes = -1;
            }
            if (!(minutes > 0)) {
                throw new UsageException(
                        "--minutes needs a positive number, got '"
                                + options.value("--minutes")
                                + "'.");
            }
        }
        int runs = options.intValue("--runs", minutes > 0 ? 0 : 1, 1);
        int taskManagers = options.intValue("--taskmanagers", 4, 2);
        int slots = options.intValue("--slots", 2, 1);
        long recoveryBound =
                options.intValue(
                        "--recovery-bound-ms", (int) ChaosVerdict.RECOVERY_BOUND_MILLIS, 1);
        LongFunction<ChaosPlan> plans;
        if (options.value("--shape") != null) {
            Shape shape;
            try {
                shape =
                        Shape.parse(
                                options.intValue("--source-parallelism", 2, 1),
                                options.value("--shape"));
            } catch (IllegalArgumentException e) {
                throw new UsageException("--shape: " + e.getMessage());
            }
            String dsdValue = options.value("--dsd") == null ? "full" : options.value("--dsd");
            int dsd;
            if (dsdValue.equals("full")) {
                dsd = -1;
            } else {
                CliOptions depth =
                        CliOptions.parse(
                                new ArrayDeque<>(List.of("--dsd", dsdValue)),
                                List.of("--dsd"),
                                List.of());
                dsd = depth.intValue("--dsd", -1, 1);
            }
            int kills = options.intValue("--kills", 1, 1);
            if (kills >= taskManagers) {
                throw new UsageException(
                        "--kills must leave a TaskManager running: at most "
                                + (taskManagers - 1)
                                + ", got "
                                + kills
                                + ".");
            }
            int stagger = options.intValue("--stagger-ms", 0, 0);
            plans = s -> ChaosPlan.fixed(s, shape, dsd, kills, stagger);
        } else {
            for (String fixedOnly :
                    List.of("--source-parallelism", "--dsd", "--kills", "--stagger-ms")) {
                if (options.value(fixedOnly) != null) {
                    throw new UsageException(fixedOnly + " goes with --shape.");
                }
            }
            plans = s -> ChaosPlan.of(s, taskManagers, slots);
        }
        int splits = options.intValue("--splits-per-subtask", 1, 1);
        boolean chainedSources = options.flags.contains("--chained-sources");
        if (chainedSources && splits > 1) {
            throw new UsageException(
                    "--chained-sources reads one split at a time; it does not go with --splits-per-subtask.");
        }
        LongFunction<ChaosPlan> drawn = plans;
        int checkpointInterval = options.intValue("--checkpoint-interval", 500, 10);
        plans =
                s -> {
                    ChaosPlan plan =
                            drawn.apply(s)
                                    .withSplitsPerSubtask(splits)
                                    .withCheckpointInterval(checkpointInterval);
                    return chainedSources ? plan.withChainedSources() : plan;
                };
        Path output =
                Paths.get(
                                options.value("--output") == null
                                        ? "chaos-" + System.currentTimeMillis()
                                        : options.value("--output"))
                        .toAbsolutePath();
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("CLONOS_RUN_DIR", output.resolve("run").toString());
        env.put("CLONOS_LOG_DIR", output.resolve("log").toString());
        ClonosHome home = ClonosHome.fromEnvironment(env, options.value("--conf-dir"));
        out.println(
                "chaos: "
                        + taskManagers
                        + " TaskManagers x "
                        + slots
                        + " slots, first seed "
                        + seed
                        + ", output and logs in "
                        + output);
        boolean passed =
                new ChaosCommand(
                                home,
                                options.dynamicProperties,
                                taskManagers,
                                slots,
                                recoveryBound,
                                out)
                        .run(plans, seed, runs, minutes, output);
        return passed ? 0 : 1;
    }

    private static int demo(Deque<String> args, PrintStream out) throws Exception {
        CliOptions options =
                CliOptions.parse(
                        args,
                        List.of("--count", "--rate", "--keys", "--conf-dir"),
                        List.of("--no-failure"));
        options.requireNoPositional();
        ClonosHome home = ClonosHome.fromEnvironment(System.getenv(), options.value("--conf-dir"));
        boolean correct =
                new Demo(out)
                        .run(
                                home,
                                options.dynamicProperties,
                                options.intValue("--count", 20_000, 1),
                                options.intValue("--rate", 4_000, 1),
                                options.intValue("--keys", 8, 1),
                                !options.flags.contains("--no-failure"));
        return correct ? 0 : 1;
    }

    /** A usage error: the command line is wrong, not the cluster. */
    public static final class UsageException extends Exception {
        public UsageException(String message) {
            super(message);
        }
    }
}
