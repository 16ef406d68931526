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

import io.clonos.beam.ClonosPipelineOptions;
import io.clonos.beam.ClonosRunner;
import io.clonos.bench.probe.DeterminantBytesReporter;
import io.clonos.bench.stats.ThreadCpuSampler;
import io.clonos.runtime.minicluster.EmbeddedClusters;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.clusterframework.ApplicationStatus;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.util.FileUtils;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.nexmark.NexmarkConfiguration;
import org.apache.beam.sdk.nexmark.NexmarkUtils;
import org.apache.beam.sdk.nexmark.model.Event;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * {@code bin/clonos nexmark overhead}: the Nexmark queries of the harness, without failures, on
 * vanilla Flink 1.20.5 (Beam's FlinkRunner) and on Clonos at determinant sharing depth 1 and full
 * (ClonosRunner), each run on an embedded cluster of its own of the same shape, in one invocation,
 * after one uncounted run per system, each query {@code repetitions} times per system (alternating
 * which goes first; the median counts, the spread is reported beside it). A run reads Beam's
 * unbounded generator as fast as the query takes it, for a warm-up and then a steady state of fixed
 * lengths, and is cancelled after that; its figures come from the steady state only: the events
 * that entered the query per second, the end-to-end latency of the results that left it (p50 and
 * p99, see {@link SteadyStateProbes}), the CPU time of the JVM's threads per event (the clusters
 * run in this JVM; by group of threads too), and the determinant bytes per event over the whole
 * run. Results as CSV, JSON (every run's figures, and the medians) and an HTML page with the
 * relative throughput per query (the paper's Figure 5).
 */
public final class NexmarkOverhead {

    /** The systems, in the order they run for each query. */
    static final List<String> SYSTEMS = List.of("flink", "clonos-dsd-1", "clonos-dsd-full");

    /**
     * The queries with a steady state: all but those that need a bounded input, whose results come
     * only when the input ends.
     */
    static final List<Integer> QUERIES =
            NexmarkQueries.QUERIES.stream()
                    .filter(query -> !NexmarkQueries.BOUNDED_INPUT.contains(query))
                    .toList();

    /** The knobs. */
    public static final class Settings {
        public int parallelism = 2;
        public List<Integer> queries = QUERIES;
        public Path output = Path.of("bench-results", "nexmark-overhead");

        /** Runs per query and system, alternating which system goes first; the median counts. */
        public int repetitions = 3;

        /** Checkpoints on every system, as the paper took them (every 5 s). */
        public long checkpointIntervalMs = 5_000;

        /** What a run does before its figures count: JIT compilation, state filling up. */
        public long warmupMillis = 10_000;

        /** How long a run's figures are taken over, after the warm-up. */
        public long steadyMillis = 20_000;
    }

    /**
     * One query on one system, in the steady state: {@code events} entered the query and {@code
     * results} left it in {@code millis}; {@code p50Ms} and {@code p99Ms} are end-to-end latencies,
     * -1 where no result had one (see {@link SteadyStateProbes.Steady}).
     */
    record Run(
            int query,
            String system,
            long events,
            long millis,
            long results,
            long p50Ms,
            long p99Ms,
            double determinantBytesPerEvent,
            double cpuNsPerEvent,
            Map<String, Double> cpuNsPerEventByThreads) {
        double eventsPerSecond() {
            return millis <= 0 ? 0 : events * 1000.0 / millis;
        }
    }

    /**
     * How much event time passes per event: the generator stamps this many events per second of
     * event time (as the earlier bounded runs did), so that the queries' 10 s windows close many
     * times a second of a run and the windowed queries' latencies have many samples.
     */
    static final int EVENTS_PER_EVENT_TIME_SECOND = 1_000;

    /** How long the first event may take to enter the query after the job was submitted. */
    private static final long FIRST_EVENT_TIMEOUT_MS = 120_000;

    /** How long the runner may take to return once its job was cancelled. */
    private static final long CANCEL_TIMEOUT_SECONDS = 60;

    /** What a run goes on for beyond its steady state, so that its last rows reach the files. */
    private static final long TAIL_MILLIS = 2_000;

    private final Settings settings;
    private final PrintStream out;

    public NexmarkOverhead(Settings settings, PrintStream out) {
        this.settings = settings;
        this.out = out;
        for (int query : settings.queries) {
            if (NexmarkQueries.BOUNDED_INPUT.contains(query)) {
                throw new IllegalArgumentException(
                        "Q"
                                + query
                                + " needs a bounded input and has its results only when the input ends: it has no steady state to measure; the overhead experiment runs "
                                + QUERIES);
            }
        }
    }

    /** Runs every query on every system; returns the medians, also written to the output. */
    public List<Run> run() throws Exception {
        out.printf(
                Locale.ROOT,
                "Nexmark overhead: queries %s, parallelism %d, a checkpoint every %d ms, on %s, %d runs each of %.0f s warm-up and %.0f s steady state (medians)%n",
                settings.queries,
                settings.parallelism,
                settings.checkpointIntervalMs,
                SYSTEMS,
                settings.repetitions,
                settings.warmupMillis / 1000.0,
                settings.steadyMillis / 1000.0);
        List<Run> medians = new ArrayList<>();
        List<Run> all = new ArrayList<>();
        long started = System.nanoTime();
        // the first jobs in a JVM run cold code (class loading of Beam's translation, Flink's
        // runtime, Clonos's): one uncounted run per system
        for (String system : SYSTEMS) {
            runOnce(settings.queries.get(0), system);
            out.printf(
                    Locale.ROOT,
                    "[%4ds] warm-up run on %s done%n",
                    (System.nanoTime() - started) / 1_000_000_000L,
                    system);
        }
        for (int query : settings.queries) {
            Map<String, List<Run>> repeated = new LinkedHashMap<>();
            for (int repetition = 0; repetition < settings.repetitions; repetition++) {
                for (int i = 0; i < SYSTEMS.size(); i++) {
                    String system = SYSTEMS.get((i + repetition) % SYSTEMS.size());
                    Run run = runOnce(query, system);
                    repeated.computeIfAbsent(system, s -> new ArrayList<>()).add(run);
                    all.add(run);
                    out.printf(
                            Locale.ROOT,
                            "[%4ds] Q%-2d %-16s run %d/%d %,12.0f events/s over %.1f s, latency p50 %d ms, p99 %d ms, %,.0f ns CPU per event, %.3f determinant bytes per event (%d results)%n",
                            (System.nanoTime() - started) / 1_000_000_000L,
                            query,
                            system,
                            repetition + 1,
                            settings.repetitions,
                            run.eventsPerSecond(),
                            run.millis() / 1000.0,
                            run.p50Ms(),
                            run.p99Ms(),
                            run.cpuNsPerEvent(),
                            run.determinantBytesPerEvent(),
                            run.results());
                }
            }
            for (String system : SYSTEMS) {
                medians.add(median(repeated.get(system)));
            }
            // after every query: a run that never ends (a job that cannot be cancelled) loses
            // only the queries after it
            write(medians, all);
        }
        out.println(NexmarkReport.table(medians, all));
        out.println("Results: " + settings.output.toAbsolutePath());
        return medians;
    }

    private void write(List<Run> medians, List<Run> all) throws IOException {
        Files.createDirectories(settings.output);
        Files.writeString(settings.output.resolve("overhead.csv"), NexmarkReport.csv(medians));
        Files.writeString(
                settings.output.resolve("overhead.json"),
                NexmarkReport.json(medians, all, settings) + "\n");
        Files.writeString(
                settings.output.resolve("overhead.html"),
                NexmarkReport.html(medians, all, settings));
    }

    /** The run of median throughput (the lower middle one of an even count). */
    static Run median(List<Run> runs) {
        List<Run> sorted = new ArrayList<>(runs);
        sorted.sort(Comparator.comparingDouble(Run::eventsPerSecond));
        return sorted.get((sorted.size() - 1) / 2);
    }

    /**
     * Runs {@code query} once on {@code system}. Each system runs on an embedded cluster of its own
     * of the same shape, reached over REST: vanilla Flink's for Beam's FlinkRunner, Clonos's for
     * ClonosRunner (started here rather than by the runner, so that its metrics reach the reporter
     * that counts the run's determinant bytes).
     */
    private Run runOnce(int query, String system) throws Exception {
        boolean onClonos = !system.equals("flink");
        int slots = Math.max(2, settings.parallelism);
        Path metrics = Files.createTempDirectory("clonos-nexmark-metrics");
        Path probes = Files.createTempDirectory("clonos-nexmark-probes");
        Path checkpoints = Files.createTempDirectory("clonos-nexmark-checkpoints");
        Configuration config = new Configuration();
        DeterminantBytesReporter.configure(config, metrics);
        // checkpoints to files on every system: the JobManager's memory takes 5 MB per task at
        // most, which a query's buffered elements outgrow within seconds of a run
        config.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        config.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        ThreadCpuSampler threads = ThreadCpuSampler.start();
        try {
            try (MiniCluster cluster =
                    EmbeddedClusters.start(
                            onClonos,
                            config,
                            ClonosPipelineOptions.EMBEDDED_TASK_MANAGERS,
                            slots)) {
                URI rest = cluster.getRestAddress().get();
                String master = rest.getHost() + ":" + rest.getPort();
                List<String> runner =
                        onClonos
                                ? List.of(
                                        "--runner=ClonosRunner",
                                        "--clonosMaster=" + master,
                                        "--determinantSharingDepth="
                                                + (system.equals("clonos-dsd-1") ? 1 : -1))
                                : List.of("--runner=FlinkRunner", "--flinkMaster=" + master);
                runTimed(
                        cluster,
                        pipeline(query, runner, probes),
                        probes,
                        "Q" + query + " on " + system);
            }
            // the cluster is closed: every task ended and reported its causal log's bytes
            SteadyStateProbes.Steady steady =
                    SteadyStateProbes.Steady.read(
                            probes, settings.warmupMillis, settings.steadyMillis);
            ThreadCpuSampler.Window window = threads.between(steady.from(), steady.to());
            Map<String, Double> byThreads =
                    window.nanosPerElement(steady.events() * 1000.0 / Math.max(1, steady.millis()));
            return new Run(
                    query,
                    system,
                    steady.events(),
                    steady.millis(),
                    steady.results(),
                    steady.latencies().quantile(0.50),
                    steady.latencies().quantile(0.99),
                    DeterminantBytesReporter.endedTasksBytes(metrics)
                            / (double) Math.max(1, steady.allEvents()),
                    byThreads.values().stream().mapToDouble(Double::doubleValue).sum(),
                    byThreads);
        } finally {
            threads.close();
            FileUtils.deleteDirectory(metrics.toFile());
            FileUtils.deleteDirectory(probes.toFile());
            FileUtils.deleteDirectory(checkpoints.toFile());
        }
    }

    private Pipeline pipeline(int query, List<String> runnerArgs, Path probes) throws IOException {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--streaming=true",
                                "--parallelism=" + settings.parallelism,
                                "--checkpointingInterval=" + settings.checkpointIntervalMs));
        args.addAll(runnerArgs);
        // the job's classes are on the embedded cluster's class path already; Beam stages the
        // whole class path when it is given no file, so it gets an empty jar
        args.add("--filesToStage=" + ClonosRunner.emptyJar());
        PipelineOptions options =
                PipelineOptionsFactory.fromArgs(args.toArray(new String[0])).create();
        // no bound on the events: the run is cancelled after its steady state
        NexmarkConfiguration config = NexmarkQueries.configuration(0);
        config.firstEventRate = EVENTS_PER_EVENT_TIME_SECOND;
        config.nextEventRate = config.firstEventRate;
        Pipeline pipeline = Pipeline.create(options);
        // the unbounded generator: its watermark follows event time, so windows close as the
        // events go by
        PTransform<PBegin, PCollection<Event>> source = NexmarkUtils.streamEventsSource(config);
        NexmarkQueries.apply(
                        pipeline,
                        config,
                        query,
                        source,
                        ParDo.of(new SteadyStateProbes.FirstEvent(probes.toString())))
                .apply(ParDo.of(new SteadyStateProbes.LastResult(probes.toString())));
        return pipeline;
    }

    /**
     * Runs {@code pipeline} on {@code cluster} through the warm-up and the steady state, counted
     * from the first event's entry, and cancels it. The job must not end by itself before.
     */
    private void runTimed(MiniCluster cluster, Pipeline pipeline, Path probes, String label)
            throws Exception {
        ExecutorService submitter = Executors.newSingleThreadExecutor();
        try {
            // Beam's runners wait for the job's end in run()
            Future<?> running = submitter.submit(() -> pipeline.run().waitUntilFinish());
            long deadline = System.currentTimeMillis() + FIRST_EVENT_TIMEOUT_MS;
            while (!SteadyStateProbes.anyEntered(probes)) {
                if (running.isDone()) {
                    running.get();
                    throw new IllegalStateException(label + " ended before any event entered");
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException(
                            label
                                    + ": no event entered the query in "
                                    + FIRST_EVENT_TIMEOUT_MS
                                    + " ms");
                }
                Thread.sleep(100);
            }
            long end =
                    System.currentTimeMillis()
                            + settings.warmupMillis
                            + settings.steadyMillis
                            + TAIL_MILLIS;
            while (System.currentTimeMillis() < end && !running.isDone()) {
                Thread.sleep(Math.min(200, Math.max(1, end - System.currentTimeMillis())));
            }
            if (running.isDone()) {
                running.get();
                throw new IllegalStateException(
                        label + " ended by itself before its steady state was over");
            }
            JobID job = onlyJob(cluster);
            cluster.cancelJob(job).get();
            JobResult result = cluster.requestJobResult(job).get();
            if (result.getApplicationStatus() != ApplicationStatus.CANCELED) {
                throw new IllegalStateException(
                        label
                                + " ended "
                                + result.getApplicationStatus()
                                + " instead of being cancelled",
                        result.getSerializedThrowable().orElse(null));
            }
            try {
                running.get(CANCEL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            } catch (ExecutionException expected) {
                // Beam's runners report the cancelled job as a failed run
            }
        } finally {
            submitter.shutdownNow();
        }
    }

    private static JobID onlyJob(MiniCluster cluster) throws Exception {
        Collection<JobStatusMessage> jobs = cluster.listJobs().get();
        if (jobs.size() != 1) {
            throw new IllegalStateException("Expected one job on the run's cluster, found " + jobs);
        }
        return jobs.iterator().next().getJobId();
    }
}
