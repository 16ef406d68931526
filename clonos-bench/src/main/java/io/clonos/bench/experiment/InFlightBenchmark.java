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

package io.clonos.bench.experiment;

import io.clonos.runtime.configuration.ClonosConfiguration;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code bin/clonos bench inflight}: what the in-flight log costs a job that runs as fast as the
 * machine allows, by log type and spill policy, against vanilla Flink in the same run, at each
 * checkpoint interval: throughput, latency and the memory the logs hold per task over time (sampled
 * every second). It is the overhead benchmark ({@link OverheadBenchmark}) with the log's settings
 * as the variants; causal logging stays at the depth given (0 by default), so that what differs is
 * the log.
 */
@Internal
public final class InFlightBenchmark {

    /** The benchmark's knobs. */
    public static final class Settings {
        public long records = 40_000_000;
        public int repetitions = 3;
        public long warmupMillis = 5_000;
        public List<Long> checkpointIntervalsMs = List.of(5_000L, 60_000L);
        public List<String> logs = List.of("availability", "eager", "epoch", "in-memory");
        public String dsd = "0";
        public Map<String, String> clonosProperties = Map.of();
        public Path output = Path.of("bench-results", "inflight");

        /** As {@link OverheadBenchmark.Settings#freshJvmPerRun}. */
        public boolean freshJvmPerRun = true;
    }

    private final Settings settings;
    private final PrintStream out;

    public InFlightBenchmark(Settings settings, PrintStream out) {
        this.settings = settings;
        this.out = out;
    }

    /** The Clonos variant of one log: a spill policy of the spillable log, or another log type. */
    static OverheadBenchmark.Variant variant(String log, String dsd) {
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("clonos.determinant-sharing-depth", dsd);
        switch (log) {
            case "in-memory":
            case "disabled":
                properties.put("clonos.in-flight-log.type", log);
                break;
            case "availability":
            case "eager":
            case "epoch":
                properties.put("clonos.in-flight-log.type", "spillable");
                properties.put("clonos.in-flight-log.spill-policy", log);
                break;
            default:
                throw new IllegalArgumentException(
                        "--logs takes in-memory, disabled, availability, eager or epoch, got '"
                                + log
                                + "'");
        }
        return OverheadBenchmark.Variant.clonos(log, properties);
    }

    /** Runs the comparison at every checkpoint interval; returns the summaries' JSON. */
    public List<String> run() throws Exception {
        List<OverheadBenchmark.Variant> variants = new ArrayList<>();
        variants.add(OverheadBenchmark.Variant.FLINK);
        for (String log : settings.logs) {
            OverheadBenchmark.Variant variant = variant(log, settings.dsd);
            // a bad setting (--dsd, -D) fails now, naming the key, not after the first runs
            Map<String, String> clonos = new LinkedHashMap<>(settings.clonosProperties);
            clonos.putAll(variant.properties());
            ClonosConfiguration.fromConfiguration(Configuration.fromMap(clonos));
            variants.add(variant);
        }
        List<String> summaries = new ArrayList<>();
        for (long interval : settings.checkpointIntervalsMs) {
            out.printf("%n== Checkpoints every %d ms ==%n", interval);
            OverheadBenchmark.Settings run = new OverheadBenchmark.Settings();
            run.name = "inflight";
            run.records = settings.records;
            run.repetitions = settings.repetitions;
            run.warmupMillis = settings.warmupMillis;
            run.checkpointIntervalMs = interval;
            run.clonosProperties = settings.clonosProperties;
            run.variants = variants;
            run.freshJvmPerRun = settings.freshJvmPerRun;
            run.output = settings.output.resolve("checkpoints-" + interval + "ms");
            summaries.add(new OverheadBenchmark(run, out).run());
        }
        Files.createDirectories(settings.output);
        Files.writeString(
                settings.output.resolve("summary.json"),
                "{\"benchmark\":\"inflight\",\"dsd\":"
                        + settings.dsd
                        + ",\"intervals\":["
                        + String.join(",", summaries)
                        + "]}\n");
        return summaries;
    }
}
