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

package io.clonos.nexmark;

import io.clonos.bench.report.FailurePlan;
import io.clonos.nexmark.failure.EventPublisher;
import io.clonos.nexmark.failure.FailureClusters;
import io.clonos.nexmark.failure.FailureQuery;
import io.clonos.nexmark.failure.FailureSettings;
import io.clonos.nexmark.failure.NexmarkFailure;
import io.clonos.nexmark.failure.RecomputedFigures;
import io.clonos.nexmark.failure.SeparateFailureClusters;

import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@code bin/clonos nexmark ...}: the Nexmark experiments. The launcher runs it with the harness's
 * jars ({@code opt/nexmark}) next to Clonos's, which Clonos's own commands do not load.
 */
public final class NexmarkCli {

    static final String USAGE =
            String.join(
                    "\n",
                    "Usage: clonos nexmark <experiment> [options]",
                    "  overhead [--queries Q,Q,...] [--warmup-seconds W] [--steady-seconds S] [--parallelism P]",
                    "          [--repetitions R] [--checkpoint-interval MS] [--output DIR]",
                    "        The Nexmark queries with a steady state (all but Q10 and Q15), without failures, on",
                    "        Flink and on Clonos at determinant sharing depth 1 and full: each run reads the",
                    "        unbounded generator as fast as the query takes it for W s of warm-up and S s of",
                    "        steady state, and is cancelled; per query and system the steady state's throughput,",
                    "        end-to-end latency (p50, p99), CPU per event and determinant bytes per event, relative",
                    "        to Flink, as CSV, JSON (every run) and an HTML chart; R runs per query and system",
                    "        in alternating order, medians and spread. Defaults: W 10, S 20, parallelism 2,",
                    "        3 repetitions, a checkpoint every 5000 ms, bench-results/nexmark-overhead.",
                    "  failure --query 3|8|synthetic [--rate N | --load F [--capacity-events N]] [--seconds S]",
                    "          [--kill-after S] [--failures one|concurrent|staggered] [--repetitions R] [--parallelism P]",
                    "          [--person-bytes B] [--auction-bytes B] [--window-seconds S] [--state-mb MB]",
                    "          [--partitions-per-subtask N] [--checkpoint-interval MS] [--checkpoint-dir URI]",
                    "          [--bootstrap-servers HOST:PORT]",
                    "          [--standby true|false] [--processes embedded|separate] [--progress-interval MS]",
                    "          [-D key=value ...] [--output DIR]",
                    "        The query between Kafka topics (a broker in this JVM unless --bootstrap-servers),",
                    "        exactly-once Kafka sink, RocksDB incremental checkpoints to URI; the TaskManager",
                    "        running the query's first subtask is lost after S seconds (embedded clusters: it",
                    "        is terminated; separate: standalone clusters of JVMs, killed with SIGKILL), on Clonos and on",
                    "        Flink in one run; output checked against a failure-free run; throughput and",
                    "        latency over time, recovery times, as CSV, JSON and an HTML page. --load: the",
                    "        rate is F (0 < F <= 1) of the capacity a first run of N events unthrottled on",
                    "        Clonos measures. --repetitions: R runs of each system, the order alternating,",
                    "        medians and range. --failures: the TaskManager of the first subtask lost, or",
                    "        those of the first three at once or 5 s apart (one slice must survive: parallelism 4+).",
                    "        --person-bytes, --auction-bytes: Nexmark's average sizes of",
                    "        persons and auctions (padding), which the queries keep in state, so they size it.",
                    "        --window-seconds: Q8's window. synthetic: the paper's synthetic job, 5 keyed",
                    "        stateful stages, each a task of its own, over every event; --state-mb: its state",
                    "        per stateful subtask once every key was seen.",
                    "        Defaults: load 0.75 (--rate N: N events/s instead) for 60 s, kill after 30 s, 1",
                    "        repetition, 2000000 capacity events, parallelism 2, 4 input partitions per",
                    "        subtask, persons of 200 and auctions of 500 bytes, 10 s windows, 10 MB of synthetic",
                    "        state per subtask, checkpoint every 5000 ms,",
                    "        a temporary checkpoint directory, standby true, bench-results/nexmark-failure.",
                    "        --baseline-seconds S: the latency level before the failure is that of the S s before",
                    "        it (default: two thirds of --kill-after). --progress-interval MS: every MS ms, each",
                    "        subtask's watermarks, sources' event-time lag, record counts, busy and back-pressured",
                    "        time (RocksDB metrics if enabled) and each TaskManager's CPU time from the REST API",
                    "        (metrics.fetcher.update-interval set to MS on both systems), <query>-progress-<run>.csv.",
                    "  figures --outputs DIR --baseline-seconds S",
                    "        A failure run's latency figures computed again from the result times in DIR",
                    "        (<query>-outputs-<run>.csv), the level before the failure from its last S s:",
                    "        a table and <query>-figures.json in DIR; for a windowed query (Q8) also each",
                    "        window's firing per output partition: first result, p50, last, results/s.");

    private NexmarkCli() {}

    public static void main(String[] args) throws Exception {
        System.exit(run(args, List.of(new SeparateFailureClusters())));
    }

    static int run(String[] args) throws Exception {
        return run(args, List.of());
    }

    /**
     * Runs the experiment that {@code args} name; {@code clusters} are the caller's kinds of
     * cluster beside the embedded one ({@code --processes}), as the distribution's launcher gives
     * its separate processes. Returns the exit code.
     */
    public static int run(String[] args, List<FailureClusters> clusters) throws Exception {
        if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
            System.out.println(USAGE);
            return 0;
        }
        Deque<String> rest = new ArrayDeque<>(Arrays.asList(args));
        String experiment = rest.poll();
        Map<String, Consumer<String>> options = new HashMap<>();
        Callable<?> run;
        if ("overhead".equals(experiment)) {
            NexmarkOverhead.Settings settings = new NexmarkOverhead.Settings();
            options.put(
                    "--warmup-seconds", v -> settings.warmupMillis = millis("--warmup-seconds", v));
            options.put(
                    "--steady-seconds", v -> settings.steadyMillis = millis("--steady-seconds", v));
            options.put(
                    "--parallelism",
                    v ->
                            settings.parallelism =
                                    (int) positive("--parallelism", Integer.parseInt(v)));
            options.put(
                    "--repetitions",
                    v ->
                            settings.repetitions =
                                    (int) positive("--repetitions", Integer.parseInt(v)));
            options.put("--output", v -> settings.output = Path.of(v));
            options.put("--queries", v -> settings.queries = queries(v));
            options.put(
                    "--checkpoint-interval",
                    v ->
                            settings.checkpointIntervalMs =
                                    positive("--checkpoint-interval", Long.parseLong(v)));
            run = () -> new NexmarkOverhead(settings, System.out).run();
        } else if ("failure".equals(experiment)) {
            FailureSettings settings = new FailureSettings();
            settings.query = null;
            Set<String> given = new HashSet<>();
            options.put("--query", v -> settings.query = FailureQuery.of(v));
            options.put(
                    "--baseline-seconds",
                    v ->
                            settings.baselineSeconds =
                                    (int) positive("--baseline-seconds", Integer.parseInt(v)));
            options.put("--failures", v -> settings.failures = FailurePlan.parse("--failures", v));
            options.put(
                    "--state-mb",
                    v -> {
                        settings.syntheticStateMb =
                                (int) positive("--state-mb", Integer.parseInt(v));
                        given.add("--state-mb");
                    });
            options.put(
                    "--window-seconds",
                    v -> {
                        settings.windowSeconds = positive("--window-seconds", Long.parseLong(v));
                        given.add("--window-seconds");
                    });
            options.put(
                    "--rate",
                    v -> {
                        settings.rate = (int) positive("--rate", Integer.parseInt(v));
                        given.add("--rate");
                    });
            options.put(
                    "--load",
                    v -> {
                        settings.load = fraction("--load", v);
                        given.add("--load");
                    });
            options.put(
                    "--capacity-events",
                    v -> {
                        settings.capacityEvents = positive("--capacity-events", Long.parseLong(v));
                        given.add("--capacity-events");
                    });
            options.put(
                    "--person-bytes",
                    v ->
                            settings.eventSizes =
                                    new EventPublisher.EventSizes(
                                            (int) positive("--person-bytes", Integer.parseInt(v)),
                                            settings.eventSizes.auctionBytes()));
            options.put(
                    "--auction-bytes",
                    v ->
                            settings.eventSizes =
                                    new EventPublisher.EventSizes(
                                            settings.eventSizes.personBytes(),
                                            (int)
                                                    positive(
                                                            "--auction-bytes",
                                                            Integer.parseInt(v))));
            options.put(
                    "--repetitions",
                    v ->
                            settings.repetitions =
                                    (int) positive("--repetitions", Integer.parseInt(v)));
            options.put(
                    "--seconds",
                    v -> settings.seconds = (int) positive("--seconds", Integer.parseInt(v)));
            options.put(
                    "--kill-after",
                    v ->
                            settings.killAfterSeconds =
                                    (int) positive("--kill-after", Integer.parseInt(v)));
            options.put(
                    "--parallelism",
                    v ->
                            settings.parallelism =
                                    (int) positive("--parallelism", Integer.parseInt(v)));
            options.put(
                    "--partitions-per-subtask",
                    v ->
                            settings.partitionsPerSubtask =
                                    (int)
                                            positive(
                                                    "--partitions-per-subtask",
                                                    Integer.parseInt(v)));
            options.put(
                    "--checkpoint-interval",
                    v ->
                            settings.checkpointIntervalMs =
                                    positive("--checkpoint-interval", Long.parseLong(v)));
            options.put("--checkpoint-dir", v -> settings.checkpointDir = v);
            options.put("--bootstrap-servers", v -> settings.bootstrapServers = v);
            options.put("--standby", v -> settings.standby = bool("--standby", v));
            options.put(
                    "--progress-interval",
                    v ->
                            settings.progressIntervalMs =
                                    positive("--progress-interval", Long.parseLong(v)));
            options.put("--processes", v -> settings.processes = v);
            options.put(
                    "-D",
                    v -> {
                        int eq = v.indexOf('=');
                        if (eq <= 0) {
                            throw new IllegalArgumentException(
                                    "-D needs key=value, got " + v + ".");
                        }
                        settings.properties.put(v.substring(0, eq), v.substring(eq + 1));
                    });
            options.put("--output", v -> settings.output = Path.of(v));
            run =
                    () -> {
                        if (settings.query == null) {
                            throw new IllegalArgumentException(
                                    "failure needs --query 3, 8 or synthetic.");
                        }
                        if (settings.query != FailureQuery.SYNTHETIC
                                && given.contains("--state-mb")) {
                            throw new IllegalArgumentException(
                                    "--state-mb sizes the synthetic job's state; Q3's and Q8's"
                                            + " state is their events': size it with"
                                            + " --person-bytes.");
                        }
                        if (settings.query != FailureQuery.Q8
                                && given.contains("--window-seconds")) {
                            throw new IllegalArgumentException(
                                    "--window-seconds is Q8's window; "
                                            + settings.query.title()
                                            + " has none.");
                        }
                        if (given.contains("--load") && given.contains("--rate")) {
                            throw new IllegalArgumentException(
                                    "failure takes --rate or --load, not both: --load sets the"
                                            + " rate from the capacity it measures.");
                        }
                        if (given.contains("--rate")) {
                            // a fixed rate instead of the default load
                            settings.load = 0;
                        }
                        if (settings.load == 0 && given.contains("--capacity-events")) {
                            throw new IllegalArgumentException(
                                    "--capacity-events sizes the capacity run of --load; with"
                                            + " --rate there is none.");
                        }
                        return new NexmarkFailure(settings, System.out, clusters).run();
                    };
        } else if ("figures".equals(experiment)) {
            Path[] outputs = new Path[1];
            long[] baselineSeconds = {0};
            options.put("--outputs", v -> outputs[0] = Path.of(v));
            options.put(
                    "--baseline-seconds",
                    v -> baselineSeconds[0] = positive("--baseline-seconds", Long.parseLong(v)));
            run =
                    () -> {
                        if (outputs[0] == null || baselineSeconds[0] == 0) {
                            throw new IllegalArgumentException(
                                    "figures needs --outputs DIR and --baseline-seconds S.");
                        }
                        RecomputedFigures.write(
                                outputs[0],
                                TimeUnit.SECONDS.toMillis(baselineSeconds[0]),
                                System.out);
                        return null;
                    };
        } else {
            System.err.println(USAGE);
            return 2;
        }
        try {
            while (!rest.isEmpty()) {
                String option = rest.poll();
                String value = rest.poll();
                Consumer<String> setter = options.get(option);
                if (setter == null) {
                    throw new IllegalArgumentException(
                            "Unknown option " + option + " for " + experiment + ".");
                }
                if (value == null) {
                    throw new IllegalArgumentException("Option " + option + " needs a value.");
                }
                setter.accept(value);
            }
            run.call();
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage() + "\n" + USAGE);
            return 2;
        }
        return 0;
    }

    /** A fraction in (0, 1]. */
    private static double fraction(String option, String value) {
        double fraction;
        try {
            fraction = Double.parseDouble(value);
        } catch (NumberFormatException e) {
            fraction = Double.NaN;
        }
        if (!(fraction > 0 && fraction <= 1)) {
            throw new IllegalArgumentException(
                    option + " takes a fraction of the capacity in (0, 1], not " + value + ".");
        }
        return fraction;
    }

    private static boolean bool(String option, String value) {
        if (!value.equals("true") && !value.equals("false")) {
            throw new IllegalArgumentException(option + " takes true or false, not " + value + ".");
        }
        return Boolean.parseBoolean(value);
    }

    /** A positive number of seconds, in milliseconds. */
    private static long millis(String option, String seconds) {
        return TimeUnit.SECONDS.toMillis(positive(option, Long.parseLong(seconds)));
    }

    private static long positive(String option, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(
                    option + " takes a positive number, not " + value + ".");
        }
        return value;
    }

    private static List<Integer> queries(String value) {
        List<Integer> queries = new ArrayList<>();
        for (String query : value.split(",")) {
            int number = Integer.parseInt(query.trim());
            if (!NexmarkQueries.QUERIES.contains(number)) {
                throw new IllegalArgumentException(
                        "--queries takes queries of "
                                + NexmarkQueries.QUERIES
                                + ", not "
                                + number
                                + ".");
            }
            queries.add(number);
        }
        return queries;
    }
}
