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
import io.clonos.nexmark.stats.Percentiles;
import io.clonos.runtime.minicluster.EmbeddedClusters;
import io.clonos.runtime.minicluster.ProbeRecords;
import io.clonos.streaming.tasks.DeterminantBytesReporter;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.util.FileUtils;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.nexmark.NexmarkConfiguration;
import org.apache.beam.sdk.nexmark.NexmarkUtils;
import org.apache.beam.sdk.nexmark.model.Event;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Instant;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code bin/clonos nexmark overhead}: the Nexmark queries of the harness, without failures, on
 * vanilla Flink 1.20.5 (Beam's FlinkRunner) and on Clonos at determinant sharing depth 1 and full
 * (ClonosRunner), each run on an embedded cluster of its own of the same shape, in one invocation,
 * after one uncounted warm-up run per system, each query {@code repetitions} times per system
 * (alternating which goes first; the median counts). Per query and system it reports the
 * throughput: the events over the time from the first event entering the query to the last result
 * leaving it, measured in the job (cluster start-up and job submission are not counted), and its
 * ratio to Flink's, and the end-to-end latency of the results (p50 and p99, see {@link Probe}) of
 * the same run; results as CSV, JSON and an HTML page with the relative throughput per query (the
 * paper's Figure 5). The events come from Beam's unbounded generator, bounded to {@code events}
 * that span {@value #EVENT_TIME_SECONDS} s of event time, as fast as the query takes them.
 */
public final class NexmarkOverhead {

    /** The systems, in the order they run for each query. */
    static final List<String> SYSTEMS = List.of("flink", "clonos-dsd-1", "clonos-dsd-full");

    /** The knobs. */
    public static final class Settings {
        public long events = 100_000;
        public int parallelism = 2;
        public List<Integer> queries = NexmarkQueries.QUERIES;
        public Path output = Path.of("bench-results", "nexmark-overhead");

        /** Runs per query and system, alternating which system goes first; the median counts. */
        public int repetitions = 3;

        /** Checkpoints on every system, as the paper took them (every 5 s). */
        public long checkpointIntervalMs = 5_000;
    }

    /**
     * One query on one system; {@code p50Ms} and {@code p99Ms} are end-to-end latencies, -1 where
     * no result had one (see {@link Probe}).
     */
    record Run(
            int query,
            String system,
            long events,
            long millis,
            long results,
            long p50Ms,
            long p99Ms,
            double determinantBytesPerEvent) {
        double eventsPerSecond() {
            return millis <= 0 ? 0 : events * 1000.0 / millis;
        }

        Run withDeterminantBytes(long bytes) {
            return new Run(
                    query, system, events, millis, results, p50Ms, p99Ms, bytes / (double) events);
        }
    }

    /**
     * What one run's first and last steps observed (both jobs run in this JVM and write {@link
     * ProbeRecords} to the run's directory): when the first event entered the query and the last
     * result left it, how many results left, and each result's end-to-end latency. An event's entry
     * is noted by its event time; a result's latency is the time from the entry of the first event
     * at or after the result's event time that had entered when the result left (for a window's
     * result, the event that closes the window; for a per-event result, its event) to the result
     * leaving. Results stamped beyond the events that had entered (a global window's) have none.
     */
    static final class Probe {
        static final String ENTERED = "entered";
        static final String LEFT = "left";

        long firstIn = Long.MAX_VALUE;
        long lastOut = Long.MIN_VALUE;
        long results;
        final List<Long> latencies = new ArrayList<>();

        /** From rows {event time, when} of the events that entered and the results that left. */
        static Probe of(List<long[]> entered, List<long[]> left) {
            Probe probe = new Probe();
            TreeMap<Long, Long> entries = new TreeMap<>();
            for (long[] row : entered) {
                probe.firstIn = Math.min(probe.firstIn, row[1]);
                entries.merge(row[0], row[1], Math::min);
            }
            for (long[] row : left) {
                long now = row[1];
                probe.lastOut = Math.max(probe.lastOut, now);
                probe.results++;
                for (Map.Entry<Long, Long> entry : entries.tailMap(row[0], true).entrySet()) {
                    if (entry.getValue() <= now) {
                        probe.latencies.add(now - entry.getValue());
                        break;
                    }
                }
            }
            return probe;
        }

        long percentile(double p) {
            return Percentiles.of(latencies.stream().mapToLong(Long::longValue), p);
        }
    }

    /** How much event time a run's events span: ten of the queries' 10 s windows. */
    static final long EVENT_TIME_SECONDS = 100;

    private final Settings settings;
    private final PrintStream out;

    public NexmarkOverhead(Settings settings, PrintStream out) {
        this.settings = settings;
        this.out = out;
    }

    /** Runs every query on every system; returns the runs, also written to the output directory. */
    public List<Run> run() throws Exception {
        out.printf(
                "Nexmark overhead: queries %s, %d events each, parallelism %d, a checkpoint every %d ms, on %s, %d runs each (medians)%n",
                settings.queries,
                settings.events,
                settings.parallelism,
                settings.checkpointIntervalMs,
                SYSTEMS,
                settings.repetitions);
        List<Run> runs = new ArrayList<>();
        long started = System.nanoTime();
        // the first jobs in a JVM run cold code (class loading, JIT): one uncounted run per system
        for (String system : SYSTEMS) {
            runOnce(settings.queries.get(0), system);
            out.printf(
                    Locale.ROOT,
                    "[%4ds] warm-up on %s done%n",
                    (System.nanoTime() - started) / 1_000_000_000L,
                    system);
        }
        for (int query : settings.queries) {
            Map<String, List<Run>> repeated = new java.util.LinkedHashMap<>();
            for (int repetition = 0; repetition < settings.repetitions; repetition++) {
                for (int i = 0; i < SYSTEMS.size(); i++) {
                    String system = SYSTEMS.get((i + repetition) % SYSTEMS.size());
                    Run run = runOnce(query, system);
                    repeated.computeIfAbsent(system, s -> new ArrayList<>()).add(run);
                    out.printf(
                            Locale.ROOT,
                            "[%4ds] Q%-2d %-16s run %d/%d %,12.0f events/s  (%d results, %.3f determinant bytes per event)%n",
                            (System.nanoTime() - started) / 1_000_000_000L,
                            query,
                            system,
                            repetition + 1,
                            settings.repetitions,
                            run.eventsPerSecond(),
                            run.results(),
                            run.determinantBytesPerEvent());
                }
            }
            for (String system : SYSTEMS) {
                runs.add(median(repeated.get(system)));
            }
        }
        Files.createDirectories(settings.output);
        Files.writeString(settings.output.resolve("overhead.csv"), NexmarkReport.csv(runs));
        Files.writeString(
                settings.output.resolve("overhead.json"), NexmarkReport.json(runs) + "\n");
        Files.writeString(
                settings.output.resolve("overhead.html"),
                NexmarkReport.html(runs, settings.events, settings.parallelism));
        out.println(NexmarkReport.table(runs));
        out.println("Results: " + settings.output.toAbsolutePath());
        return runs;
    }

    /** The run of median throughput (the lower middle one of an even count). */
    static Run median(List<Run> runs) {
        List<Run> sorted = new ArrayList<>(runs);
        sorted.sort(java.util.Comparator.comparingDouble(Run::eventsPerSecond));
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
        Configuration config = new Configuration();
        DeterminantBytesReporter.configure(config, metrics);
        try {
            Run run;
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
                run = runOnce(query, system, runner);
            }
            // the cluster is closed: every task ended and reported its causal log's bytes
            return run.withDeterminantBytes(DeterminantBytesReporter.endedTasksBytes(metrics));
        } finally {
            FileUtils.deleteDirectory(metrics.toFile());
        }
    }

    private Run runOnce(int query, String system, List<String> runnerArgs) throws IOException {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--streaming=true",
                                "--parallelism=" + settings.parallelism,
                                "--checkpointingInterval=" + settings.checkpointIntervalMs,
                                // Beam keeps finished sources alive when checkpointing is on (for
                                // Flink versions that could not checkpoint finished tasks), so a
                                // query with a bounded side input (Q13) never ended
                                "--shutdownSourcesAfterIdleMs=0"));
        args.addAll(runnerArgs);
        // the job's classes are on the embedded cluster's class path already; Beam stages the
        // whole class path when it is given no file, so it gets an empty jar
        args.add("--filesToStage=" + ClonosRunner.emptyJar());
        PipelineOptions options =
                PipelineOptionsFactory.fromArgs(args.toArray(new String[0])).create();
        NexmarkConfiguration config = NexmarkQueries.configuration(settings.events);
        // event time spans EVENT_TIME_SECONDS whatever the number of events, so that windowed
        // queries close windows during the run, not only when the input ends
        config.firstEventRate = (int) Math.max(1, settings.events / EVENT_TIME_SECONDS);
        config.nextEventRate = config.firstEventRate;
        Path probes = Files.createTempDirectory("clonos-nexmark-probes");
        try {
            Pipeline pipeline = Pipeline.create(options);
            // the unbounded generator: its watermark follows event time, so windows close as the
            // events go by rather than all at the end of the input
            PTransform<PBegin, PCollection<Event>> source =
                    NexmarkQueries.BOUNDED_INPUT.contains(query)
                            ? NexmarkUtils.batchEventsSource(config)
                            : NexmarkUtils.streamEventsSource(config);
            NexmarkQueries.apply(
                            pipeline,
                            config,
                            query,
                            source,
                            ParDo.of(new FirstEvent(probes.toString())))
                    .apply(ParDo.of(new LastResult(probes.toString())));
            PipelineResult.State state = pipeline.run().waitUntilFinish();
            if (state != PipelineResult.State.DONE) {
                throw new IllegalStateException("Q" + query + " on " + system + " ended " + state);
            }
            Probe probe =
                    Probe.of(
                            ProbeRecords.read(probes, Probe.ENTERED, 2),
                            ProbeRecords.read(probes, Probe.LEFT, 2));
            long millis = probe.lastOut == Long.MIN_VALUE ? 0 : probe.lastOut - probe.firstIn;
            return new Run(
                    query,
                    system,
                    settings.events,
                    millis,
                    probe.results,
                    probe.percentile(0.50),
                    probe.percentile(0.99),
                    0);
        } finally {
            FileUtils.deleteDirectory(probes.toFile());
        }
    }

    /** Writes rows {event time, when} of what passes a step, flushed with every bundle. */
    abstract static class ProbeFn<T, O> extends DoFn<T, O> {
        private final String probes;
        private final String kind;
        private transient ProbeRecords.Writer rows;

        ProbeFn(String probes, String kind) {
            this.probes = probes;
            this.kind = kind;
        }

        @Setup
        public void setup() throws IOException {
            rows = ProbeRecords.create(probes, kind, 2);
        }

        void note(Instant timestamp) throws IOException {
            rows.write(timestamp.getMillis(), System.currentTimeMillis());
        }

        @FinishBundle
        public void finishBundle() throws IOException {
            rows.flush();
        }

        @Teardown
        public void teardown() throws IOException {
            if (rows != null) {
                rows.close();
            }
        }
    }

    /** Notes when each event enters the query; passes every event on. */
    static final class FirstEvent extends ProbeFn<Event, Event> {
        FirstEvent(String probes) {
            super(probes, Probe.ENTERED);
        }

        @ProcessElement
        public void process(
                @Element Event event, @Timestamp Instant timestamp, OutputReceiver<Event> out)
                throws IOException {
            note(timestamp);
            out.output(event);
        }
    }

    /** Notes when each result leaves the query. */
    static final class LastResult extends ProbeFn<String, Void> {
        LastResult(String probes) {
            super(probes, Probe.LEFT);
        }

        @ProcessElement
        public void process(@Element String result, @Timestamp Instant timestamp)
                throws IOException {
            note(timestamp);
        }
    }
}
