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

package io.clonos.bench.cli;

import io.clonos.bench.experiment.InFlightBenchmark;
import io.clonos.bench.experiment.InFlightLogBenchmark;
import io.clonos.bench.experiment.KillSettings;
import io.clonos.bench.experiment.OverheadBenchmark;
import io.clonos.bench.experiment.PodFailureExperiment;
import io.clonos.bench.experiment.RecoveryBenchmark;
import io.clonos.bench.experiment.SeparateProcessRecovery;
import io.clonos.bench.experiment.StandbyBenchmark;
import io.clonos.bench.experiment.SyntheticJob;
import io.clonos.bench.kubernetes.KubernetesApi;
import io.clonos.bench.report.FailurePlan;
import io.clonos.cli.CliOptions;
import io.clonos.cli.ClonosCli;
import io.clonos.cli.ClonosHome;

import org.apache.flink.annotation.Internal;

import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;

/** {@code clonos bench ...}: the benchmarks' command lines, parsed into their settings. */
@Internal
public final class BenchCommand {

    private BenchCommand() {}

    /** {@code bin/clonos bench ...}: the launcher's command line with the benchmarks added. */
    public static void main(String[] args) {
        System.exit(
                ClonosCli.run(args, System.out, System.err, Map.of("bench", BenchCommand::run)));
    }

    static int run(Deque<String> args, PrintStream out) throws Exception {
        String benchmark = args.poll();
        if ("overhead".equals(benchmark)) {
            return benchOverhead(args, out);
        }
        if ("standby".equals(benchmark)) {
            return benchStandby(args, out);
        }
        if ("inflight".equals(benchmark)) {
            return benchInFlight(args, out);
        }
        if ("in-flight-log".equals(benchmark)) {
            return benchInFlightLog(args, out);
        }
        if ("pod-failure".equals(benchmark)) {
            return benchPodFailure(args, out);
        }
        if (!"recovery".equals(benchmark)) {
            throw new ClonosCli.UsageException(
                    "bench needs a benchmark: recovery, overhead, inflight, standby, in-flight-log, pod-failure or output-latency"
                            + " (which bin/clonos runs with the Kafka experiments' class path).");
        }
        CliOptions options =
                CliOptions.parse(
                        args,
                        killOptionNames(
                                true,
                                List.of(
                                        "--processes",
                                        "--taskmanagers",
                                        "--conf-dir",
                                        "--load",
                                        "--failures",
                                        "--parallelism")),
                        List.of("--hdfs"));
        String processes = options.values.getOrDefault("--processes", "embedded");
        if ("embedded".equals(processes)) {
            for (String separateOnly :
                    List.of(
                            "--repetitions",
                            "--checkpoint-dir",
                            "--taskmanagers",
                            "--conf-dir",
                            "--load",
                            "--failures",
                            "--parallelism")) {
                if (options.value(separateOnly) != null) {
                    throw new ClonosCli.UsageException(
                            separateOnly + " needs --processes separate (bench recovery).");
                }
            }
            if (options.flags.contains("--hdfs")) {
                throw new ClonosCli.UsageException(
                        "--hdfs needs --processes separate (bench recovery).");
            }
            if (!options.dynamicProperties.isEmpty()) {
                throw new ClonosCli.UsageException(
                        "-D needs --processes separate (bench recovery).");
            }
            new RecoveryBenchmark(killSettings(options, RecoveryBenchmark.defaults(), false), out)
                    .run();
            return 0;
        }
        if (!"separate".equals(processes)) {
            throw new ClonosCli.UsageException(
                    "--processes must be embedded or separate, got '" + processes + "'.");
        }
        if (options.value("--checkpoint-dir") != null) {
            throw new ClonosCli.UsageException(
                    "--checkpoint-dir is not supported with --processes separate (checkpoints go to"
                            + " the JobManager, to -D state.checkpoints.dir=..., or to HDFS with --hdfs).");
        }
        if (options.flags.contains("--hdfs")
                && options.dynamicProperties.containsKey("state.checkpoints.dir")) {
            throw new ClonosCli.UsageException(
                    "--hdfs starts HDFS and checkpoints to it: do not set state.checkpoints.dir as well.");
        }
        KillSettings settings = killSettings(options, RecoveryBenchmark.defaults(), true);
        double load = options.fractionValue("--load", 0);
        settings.parallelism = options.intValue("--parallelism", settings.parallelism, 1);
        FailurePlan failures;
        try {
            failures =
                    FailurePlan.parse(
                            "--failures", options.values.getOrDefault("--failures", "one"));
            failures.requireSurvivorAt(settings.parallelism, "the stateful map");
        } catch (IllegalArgumentException e) {
            throw new ClonosCli.UsageException(e.getMessage());
        }
        ClonosHome home = ClonosHome.fromEnvironment(System.getenv(), options.value("--conf-dir"));
        new SeparateProcessRecovery(
                        home,
                        settings,
                        options.intValue("--taskmanagers", 3, 2),
                        options.dynamicProperties,
                        load,
                        options.flags.contains("--hdfs"),
                        failures,
                        out)
                .run();
        return 0;
    }

    /** The options of a benchmark that kills a TaskManager, over its defaults. */
    private static KillSettings killSettings(
            Deque<String> args, KillSettings settings, boolean repeatable)
            throws ClonosCli.UsageException {
        return killSettings(
                CliOptions.parse(args, killOptionNames(repeatable, List.of()), List.of()),
                settings,
                repeatable);
    }

    /** The options of a benchmark that kills a TaskManager, and {@code more}. */
    private static List<String> killOptionNames(boolean repeatable, List<String> more) {
        List<String> names =
                new ArrayList<>(
                        List.of(
                                "--records",
                                "--rate",
                                "--keys",
                                "--state-kb",
                                "--checkpoint-interval",
                                "--kill-after",
                                "--output"));
        if (repeatable) {
            names.add("--repetitions");
            names.add("--checkpoint-dir");
        }
        names.addAll(more);
        return names;
    }

    private static KillSettings killSettings(
            CliOptions options, KillSettings settings, boolean repeatable)
            throws ClonosCli.UsageException {
        options.requireNoPositional();
        settings.repetitions =
                repeatable ? options.intValue("--repetitions", settings.repetitions, 1) : 1;
        settings.checkpointDir = repeatable ? options.value("--checkpoint-dir") : null;
        settings.records = options.intValue("--records", (int) settings.records, 1000);
        settings.rate = options.intValue("--rate", settings.rate, 1);
        settings.keys = options.intValue("--keys", settings.keys, 2);
        settings.stateBytesPerKey =
                options.intValue("--state-kb", settings.stateBytesPerKey / 1024, 1) * 1024;
        settings.checkpointIntervalMs =
                options.intValue("--checkpoint-interval", (int) settings.checkpointIntervalMs, 10);
        settings.killAfterMs = options.intValue("--kill-after", (int) settings.killAfterMs, 1000);
        if (options.value("--output") != null) {
            settings.output = Path.of(options.value("--output"));
        }
        return settings;
    }

    private static int benchOverhead(Deque<String> args, PrintStream out) throws Exception {
        CliOptions options =
                CliOptions.parse(
                        args,
                        List.of(
                                "--records",
                                "--keys",
                                "--state-bytes",
                                "--repetitions",
                                "--checkpoint-interval",
                                "--warmup-seconds",
                                "--warmup-rate",
                                "--output"),
                        List.of("--one-jvm", "--user-code"));
        options.requireNoPositional();
        OverheadBenchmark.Settings settings = new OverheadBenchmark.Settings();
        settings.warmupRate = options.intValue("--warmup-rate", settings.warmupRate, 0);
        settings.freshJvmPerRun = !options.flags.contains("--one-jvm");
        if (options.flags.contains("--user-code")) {
            settings.variants = OverheadBenchmark.Variant.withUserCode();
        }
        settings.checkpointIntervalMs =
                options.intValue("--checkpoint-interval", (int) settings.checkpointIntervalMs, 10);
        settings.clonosProperties = options.dynamicProperties;
        settings.warmupMillis = warmupMillis(options, settings.warmupMillis);
        if (settings.warmupRate > 0
                && settings.warmupMillis <= SyntheticJob.WARM_UP_AT_FULL_SPEED_MILLIS) {
            // the warm-up's last 2 s run at full speed: a shorter one would hold nothing back
            throw new ClonosCli.UsageException(
                    "--warmup-rate needs a warm-up longer than "
                            + SyntheticJob.WARM_UP_AT_FULL_SPEED_MILLIS / 1000
                            + " s (its last "
                            + SyntheticJob.WARM_UP_AT_FULL_SPEED_MILLIS / 1000
                            + " s run at full speed), got --warmup-seconds "
                            + settings.warmupMillis / 1000
                            + ".");
        }
        settings.records = options.intValue("--records", (int) settings.records, 1000);
        settings.keys = options.intValue("--keys", settings.keys, 2);
        settings.stateBytesPerKey = options.intValue("--state-bytes", settings.stateBytesPerKey, 1);
        settings.repetitions = options.intValue("--repetitions", settings.repetitions, 1);
        if (options.value("--output") != null) {
            settings.output = Path.of(options.value("--output"));
        }
        new OverheadBenchmark(settings, out).run();
        return 0;
    }

    private static int benchInFlight(Deque<String> args, PrintStream out) throws Exception {
        CliOptions options =
                CliOptions.parse(
                        args,
                        List.of(
                                "--records",
                                "--repetitions",
                                "--checkpoint-intervals",
                                "--logs",
                                "--dsd",
                                "--warmup-seconds",
                                "--output"),
                        List.of("--one-jvm"));
        options.requireNoPositional();
        InFlightBenchmark.Settings settings = new InFlightBenchmark.Settings();
        settings.freshJvmPerRun = !options.flags.contains("--one-jvm");
        settings.records = options.intValue("--records", (int) settings.records, 1000);
        settings.repetitions = options.intValue("--repetitions", settings.repetitions, 1);
        settings.warmupMillis = warmupMillis(options, settings.warmupMillis);
        // the same least interval as --checkpoint-interval's
        settings.checkpointIntervalsMs =
                options.millisecondsList(
                        "--checkpoint-intervals", settings.checkpointIntervalsMs, 10);
        if (options.value("--logs") != null) {
            // checked before the first run: an unknown log fails at once, naming itself
            settings.logs = List.of(options.value("--logs").split(","));
        }
        if (options.value("--dsd") != null) {
            settings.dsd = options.value("--dsd").equals("full") ? "-1" : options.value("--dsd");
        }
        settings.clonosProperties = options.dynamicProperties;
        if (options.value("--output") != null) {
            settings.output = Path.of(options.value("--output"));
        }
        new InFlightBenchmark(settings, out).run();
        return 0;
    }

    /** {@code --warmup-seconds} in milliseconds, or {@code defaultMillis}. */
    private static long warmupMillis(CliOptions options, long defaultMillis)
            throws ClonosCli.UsageException {
        return 1000L * options.intValue("--warmup-seconds", (int) (defaultMillis / 1000), 0);
    }

    private static int benchInFlightLog(Deque<String> args, PrintStream out) throws Exception {
        CliOptions options =
                CliOptions.parse(
                        args,
                        List.of(
                                "--megabytes",
                                "--memory-mb",
                                "--epoch-mb",
                                "--prefetch",
                                "--repetitions"),
                        List.of());
        options.requireNoPositional();
        new InFlightLogBenchmark(out)
                .run(
                        options.intValue("--megabytes", 256, 1),
                        options.intValue("--memory-mb", 32, 1),
                        options.intValue("--epoch-mb", 32, 1),
                        options.intValue("--prefetch", 32, 1),
                        options.intValue("--repetitions", 5, 1));
        return 0;
    }

    private static int benchPodFailure(Deque<String> args, PrintStream out) throws Exception {
        CliOptions options =
                CliOptions.parse(
                        args,
                        List.of(
                                "--namespace",
                                "--kubernetes-api",
                                "--records",
                                "--rate",
                                "--checkpoint-interval",
                                "--timeout-seconds",
                                "--job-output",
                                "--output",
                                "--conf-dir"),
                        List.of());
        options.requireNoPositional();
        ClonosHome home = ClonosHome.fromEnvironment(System.getenv(), options.value("--conf-dir"));
        String api = options.value("--kubernetes-api");
        PodFailureExperiment.Settings settings =
                new PodFailureExperiment.Settings(
                        home.loadConfiguration(options.dynamicProperties),
                        KubernetesApi.inCluster(
                                System.getenv(), api == null ? null : URI.create(api)),
                        options.values.containsKey("--namespace")
                                ? options.value("--namespace")
                                : KubernetesApi.podNamespace(),
                        options.intValue("--records", 20_000, 1),
                        options.intValue("--rate", 1_000, 1),
                        options.intValue("--checkpoint-interval", 500, 10),
                        Duration.ofSeconds(options.intValue("--timeout-seconds", 300, 1)),
                        Paths.get(options.values.getOrDefault("--output", "results")),
                        options.values.getOrDefault(
                                "--job-output",
                                "/tmp/clonos-pod-failure-" + System.currentTimeMillis()));
        return new PodFailureExperiment(settings, home, out).run();
    }

    private static int benchStandby(Deque<String> args, PrintStream out) throws Exception {
        new StandbyBenchmark(killSettings(args, StandbyBenchmark.defaults(), true), out).run();
        return 0;
    }
}
