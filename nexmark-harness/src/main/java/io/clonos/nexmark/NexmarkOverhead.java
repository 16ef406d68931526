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

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;

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

import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

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
            long p99Ms) {
        double eventsPerSecond() {
            return millis <= 0 ? 0 : events * 1000.0 / millis;
        }
    }

    /**
     * What one run's first and last steps observe (both jobs run in this JVM): when the first event
     * entered the query and the last result left it, how many results left, and each result's
     * end-to-end latency. An event's entry is noted by its event time; a result's latency is the
     * time from the entry of the first event at or after the result's event time (for a window's
     * result, the event that closes the window; for a per-event result, its event) to the result
     * leaving. Results stamped beyond the last event (a global window's) have none.
     */
    static final class Probe {
        final AtomicLong firstIn = new AtomicLong(Long.MAX_VALUE);
        final AtomicLong lastOut = new AtomicLong(Long.MIN_VALUE);
        final AtomicLong results = new AtomicLong();
        final ConcurrentSkipListMap<Long, Long> entries = new ConcurrentSkipListMap<>();
        final Queue<Long> latencies = new ConcurrentLinkedQueue<>();

        void entered(long eventTime, long now) {
            firstIn.accumulateAndGet(now, Math::min);
            entries.merge(eventTime, now, Math::min);
        }

        void left(long eventTime, long now) {
            lastOut.accumulateAndGet(now, Math::max);
            results.incrementAndGet();
            Map.Entry<Long, Long> entry = entries.ceilingEntry(eventTime);
            if (entry != null) {
                latencies.add(now - entry.getValue());
            }
        }

        long percentile(double p) {
            return Percentiles.of(latencies.stream().mapToLong(Long::longValue), p);
        }
    }

    /** How much event time a run's events span: ten of the queries' 10 s windows. */
    static final long EVENT_TIME_SECONDS = 100;

    /** The probes of the runs in this JVM, by run id. */
    static final Map<String, Probe> PROBES = new ConcurrentHashMap<>();

    private final Settings settings;
    private final PrintStream out;

    public NexmarkOverhead(Settings settings, PrintStream out) {
        this.settings = settings;
        this.out = out;
    }

    /** Runs every query on every system; returns the runs, also written to the output directory. */
    public List<Run> run() throws Exception {
        out.printf(
                "Nexmark overhead: queries %s, %d events each, parallelism %d, on %s, %d runs each (medians)%n",
                settings.queries,
                settings.events,
                settings.parallelism,
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
                            "[%4ds] Q%-2d %-16s run %d/%d %,12.0f events/s  (%d results)%n",
                            (System.nanoTime() - started) / 1_000_000_000L,
                            query,
                            system,
                            repetition + 1,
                            settings.repetitions,
                            run.eventsPerSecond(),
                            run.results());
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
     * of the same shape, reached over REST: vanilla Flink's for Beam's FlinkRunner, Clonos's (the
     * one ClonosRunner starts) for the others.
     */
    private Run runOnce(int query, String system) throws Exception {
        if (!system.equals("flink")) {
            return runOnce(
                    query,
                    system,
                    List.of(
                            "--runner=ClonosRunner",
                            "--determinantSharingDepth="
                                    + (system.equals("clonos-dsd-1") ? 1 : -1)));
        }
        int slots = Math.max(2, settings.parallelism);
        try (MiniCluster flink =
                EmbeddedClusters.start(
                        false,
                        new Configuration(),
                        ClonosPipelineOptions.EMBEDDED_TASK_MANAGERS,
                        slots)) {
            URI rest = flink.getRestAddress().get();
            return runOnce(
                    query,
                    system,
                    List.of(
                            "--runner=FlinkRunner",
                            "--flinkMaster=" + rest.getHost() + ":" + rest.getPort(),
                            "--filesToStage=" + ClonosRunner.emptyJar()));
        }
    }

    private Run runOnce(int query, String system, List<String> runnerArgs) {
        List<String> args =
                new ArrayList<>(
                        List.of("--streaming=true", "--parallelism=" + settings.parallelism));
        args.addAll(runnerArgs);
        PipelineOptions options =
                PipelineOptionsFactory.fromArgs(args.toArray(new String[0])).create();
        NexmarkConfiguration config = NexmarkQueries.configuration(settings.events);
        // event time spans EVENT_TIME_SECONDS whatever the number of events, so that windowed
        // queries close windows during the run, not only when the input ends
        config.firstEventRate = (int) Math.max(1, settings.events / EVENT_TIME_SECONDS);
        config.nextEventRate = config.firstEventRate;
        String id = UUID.randomUUID().toString();
        Probe probe = new Probe();
        PROBES.put(id, probe);
        try {
            Pipeline pipeline = Pipeline.create(options);
            // the unbounded generator: its watermark follows event time, so windows close as the
            // events go by rather than all at the end of the input
            PTransform<PBegin, PCollection<Event>> source =
                    NexmarkQueries.BOUNDED_INPUT.contains(query)
                            ? NexmarkUtils.batchEventsSource(config)
                            : NexmarkUtils.streamEventsSource(config);
            NexmarkQueries.apply(pipeline, config, query, source, ParDo.of(new FirstEvent(id)))
                    .apply(ParDo.of(new LastResult(id)));
            PipelineResult.State state = pipeline.run().waitUntilFinish();
            if (state != PipelineResult.State.DONE) {
                throw new IllegalStateException("Q" + query + " on " + system + " ended " + state);
            }
            long millis =
                    probe.lastOut.get() == Long.MIN_VALUE
                            ? 0
                            : probe.lastOut.get() - probe.firstIn.get();
            return new Run(
                    query,
                    system,
                    settings.events,
                    millis,
                    probe.results.get(),
                    probe.percentile(0.50),
                    probe.percentile(0.99));
        } finally {
            PROBES.remove(id);
        }
    }

    /** Notes when each event enters the query; passes every event on. */
    static final class FirstEvent extends DoFn<Event, Event> {
        private final String run;

        FirstEvent(String run) {
            this.run = run;
        }

        @ProcessElement
        public void process(
                @Element Event event, @Timestamp Instant timestamp, OutputReceiver<Event> out) {
            PROBES.get(run).entered(timestamp.getMillis(), System.currentTimeMillis());
            out.output(event);
        }
    }

    /** Notes when each result leaves the query. */
    static final class LastResult extends DoFn<String, Void> {
        private final String run;

        LastResult(String run) {
            this.run = run;
        }

        @ProcessElement
        public void process(@Element String result, @Timestamp Instant timestamp) {
            PROBES.get(run).left(timestamp.getMillis(), System.currentTimeMillis());
        }
    }
}
