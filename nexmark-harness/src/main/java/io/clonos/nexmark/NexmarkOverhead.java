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

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.nexmark.NexmarkConfiguration;
import org.apache.beam.sdk.nexmark.model.Event;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code bin/clonos nexmark overhead}: the Nexmark queries of the harness, without failures, on
 * vanilla Flink 1.20.5 (Beam's FlinkRunner) and on Clonos at determinant sharing depth 1 and full
 * (ClonosRunner, an embedded cluster each run), in one invocation, after one uncounted warm-up run
 * per system, each query {@code repetitions} times per system (alternating which goes first; the
 * median counts). Per query and system it reports
 * the throughput: the events over the time from the first event entering the query to the last
 * result leaving it, measured in the job (cluster start-up and job submission are not counted),
 * and its ratio to Flink's; results as CSV, JSON and an HTML page with the relative throughput per
 * query (the paper's Figure 5).
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

    /** One query on one system. */
    record Run(int query, String system, long events, long millis, long results) {
        double eventsPerSecond() {
            return millis <= 0 ? 0 : events * 1000.0 / millis;
        }
    }

    /** First event in and last result out of each run in this JVM (both jobs run here). */
    static final Map<String, AtomicLong[]> SPANS = new ConcurrentHashMap<>();

    private final Settings settings;
    private final PrintStream out;

    public NexmarkOverhead(Settings settings, PrintStream out) {
        this.settings = settings;
        this.out = out;
    }

    /** Runs every query on every system; returns the runs, also written to the output directory. */
    public List<Run> run() throws IOException {
        out.printf("Nexmark overhead: queries %s, %d events each, parallelism %d, on %s, %d runs each (medians)%n",
                settings.queries, settings.events, settings.parallelism, SYSTEMS, settings.repetitions);
        List<Run> runs = new ArrayList<>();
        long started = System.nanoTime();
        // the first jobs in a JVM run cold code (class loading, JIT): one uncounted run per system
        for (String system : SYSTEMS) {
            runOnce(settings.queries.get(0), system);
            out.printf(Locale.ROOT, "[%4ds] warm-up on %s done%n", (System.nanoTime() - started) / 1_000_000_000L, system);
        }
        for (int query : settings.queries) {
            Map<String, List<Run>> repeated = new java.util.LinkedHashMap<>();
            for (int repetition = 0; repetition < settings.repetitions; repetition++) {
                for (int i = 0; i < SYSTEMS.size(); i++) {
                    String system = SYSTEMS.get((i + repetition) % SYSTEMS.size());
                    Run run = runOnce(query, system);
                    repeated.computeIfAbsent(system, s -> new ArrayList<>()).add(run);
                    out.printf(Locale.ROOT, "[%4ds] Q%-2d %-16s run %d/%d %,12.0f events/s  (%d results)%n",
                            (System.nanoTime() - started) / 1_000_000_000L, query, system, repetition + 1, settings.repetitions, run.eventsPerSecond(), run.results());
                }
            }
            for (String system : SYSTEMS) {
                runs.add(median(repeated.get(system)));
            }
        }
        Files.createDirectories(settings.output);
        Files.writeString(settings.output.resolve("overhead.csv"), NexmarkReport.csv(runs));
        Files.writeString(settings.output.resolve("overhead.json"), NexmarkReport.json(runs) + "\n");
        Files.writeString(settings.output.resolve("overhead.html"), NexmarkReport.html(runs, settings.events, settings.parallelism));
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

    private Run runOnce(int query, String system) {
        List<String> args = new ArrayList<>(List.of("--streaming=true", "--parallelism=" + settings.parallelism));
        if (system.equals("flink")) {
            args.addAll(List.of("--runner=FlinkRunner", "--flinkMaster=[local]"));
        } else {
            args.addAll(List.of("--runner=ClonosRunner", "--determinantSharingDepth=" + (system.equals("clonos-dsd-1") ? 1 : -1)));
        }
        PipelineOptions options = PipelineOptionsFactory.fromArgs(args.toArray(new String[0])).create();
        NexmarkConfiguration config = NexmarkQueries.configuration(settings.events);
        String id = UUID.randomUUID().toString();
        AtomicLong[] span = {new AtomicLong(Long.MAX_VALUE), new AtomicLong(Long.MIN_VALUE), new AtomicLong()};
        SPANS.put(id, span);
        try {
            Pipeline pipeline = Pipeline.create(options);
            NexmarkQueries.apply(pipeline, config, query, ParDo.of(new FirstEvent(id))).apply(ParDo.of(new LastResult(id)));
            PipelineResult.State state = pipeline.run().waitUntilFinish();
            if (state != PipelineResult.State.DONE) {
                throw new IllegalStateException("Q" + query + " on " + system + " ended " + state);
            }
            long millis = span[1].get() == Long.MIN_VALUE ? 0 : span[1].get() - span[0].get();
            return new Run(query, system, settings.events, millis, span[2].get());
        } finally {
            SPANS.remove(id);
        }
    }

    /** Notes when the first event enters the query; passes every event on. */
    static final class FirstEvent extends DoFn<Event, Event> {
        private final String run;

        FirstEvent(String run) {
            this.run = run;
        }

        @ProcessElement
        public void process(@Element Event event, OutputReceiver<Event> out) {
            SPANS.get(run)[0].accumulateAndGet(System.currentTimeMillis(), Math::min);
            out.output(event);
        }
    }

    /** Notes when the last result leaves the query, and counts the results. */
    static final class LastResult extends DoFn<String, Void> {
        private final String run;

        LastResult(String run) {
            this.run = run;
        }

        @ProcessElement
        public void process(@Element String result) {
            AtomicLong[] span = SPANS.get(run);
            span[1].accumulateAndGet(System.currentTimeMillis(), Math::max);
            span[2].incrementAndGet();
        }
    }
}
