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

package io.clonos.nexmark.latency;

import io.clonos.bench.stats.LatencyHistogram;
import io.clonos.kafka.broker.EmbeddedKafka;
import io.clonos.runtime.minicluster.ClonosMiniCluster;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * {@code bin/clonos bench output-latency}: how soon a {@code read_committed} consumer sees what an
 * exactly-once job writes to Kafka, with {@code ClonosKafkaSink} and with Flink's {@code KafkaSink}
 * ({@code EXACTLY_ONCE}), at each checkpoint interval, the same job on the same embedded Clonos
 * cluster and Kafka broker (in this JVM), the order of the two alternating from repetition to
 * repetition. The input rate is a fraction ({@code --load}) of the capacity a first unthrottled run
 * with ClonosKafkaSink measures, or {@code --rate}. Prints a line per run and, as its last line,
 * one JSON object with the medians per system and interval.
 */
@Internal
public final class OutputLatencyBenchmark {

    /** What to run. */
    public static final class Settings {
        public List<Long> checkpointIntervalsMs = List.of(1_000L, 5_000L, 30_000L);
        public int seconds = 40;
        public double load = 0.5;
        public long rate;
        public int repetitions = 3;
        public int parallelism = 2;
        public int warmUpSeconds = 5;
        public int capacitySeconds = 10;
        public Path output = Path.of("bench-results", "output-latency");
    }

    private static final int PARTITIONS = 4;

    private final Settings settings;
    private final PrintStream out;
    private int runs;

    public OutputLatencyBenchmark(Settings settings, PrintStream out) {
        this.settings = settings;
        this.out = out;
    }

    /** One run's figures. */
    record Run(
            LatencyJob.System system,
            long checkpointIntervalMs,
            int repetition,
            LatencyHistogram latencies,
            double recordsPerSecond,
            long lost,
            long duplicated) {

        String json() {
            return String.format(
                    Locale.ROOT,
                    "{\"system\":\"%s\",\"checkpoint_interval_ms\":%d,\"repetition\":%d,\"latency_p50_ms\":%d,\"latency_p99_ms\":%d,\"latency_p999_ms\":%d,\"records_per_s\":%.0f,\"lost\":%d,\"duplicated\":%d}",
                    system.label,
                    checkpointIntervalMs,
                    repetition,
                    latencies.quantile(0.5),
                    latencies.quantile(0.99),
                    latencies.quantile(0.999),
                    recordsPerSecond,
                    lost,
                    duplicated);
        }
    }

    public String run() throws Exception {
        Files.createDirectories(settings.output);
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            ClonosMiniCluster cluster = startCluster();
            try {
                long rate = settings.rate;
                if (rate <= 0) {
                    double capacity = measureCapacity(cluster, kafka);
                    rate = Math.max(1, (long) (capacity * settings.load));
                    out.printf(
                            Locale.ROOT,
                            "capacity with ClonosKafkaSink: %.0f records/s; input at %.2f of it: %d records/s%n",
                            capacity,
                            settings.load,
                            rate);
                }
                List<Run> all = new ArrayList<>();
                for (int repetition = 1; repetition <= settings.repetitions; repetition++) {
                    List<LatencyJob.System> order =
                            repetition % 2 == 1
                                    ? List.of(
                                            LatencyJob.System.CLONOS,
                                            LatencyJob.System.FLINK_KAFKA_SINK)
                                    : List.of(
                                            LatencyJob.System.FLINK_KAFKA_SINK,
                                            LatencyJob.System.CLONOS);
                    for (long interval : settings.checkpointIntervalsMs) {
                        for (LatencyJob.System system : order) {
                            Run run = run(cluster, kafka, system, interval, rate, repetition);
                            all.add(run);
                            out.println(run.json());
                        }
                    }
                }
                return report(all, rate);
            } finally {
                cluster.close();
            }
        }
    }

    private ClonosMiniCluster startCluster() throws Exception {
        Configuration config = new Configuration();
        config.set(RestOptions.BIND_PORT, "0");
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        ClonosMiniCluster cluster = ClonosMiniCluster.create(config, 2, settings.parallelism);
        cluster.start();
        return cluster;
    }

    private double measureCapacity(ClonosMiniCluster cluster, EmbeddedKafka kafka)
            throws Exception {
        // a first estimate from a short run, then a run of the configured length at full speed
        long records = 200_000;
        Run probe = run(cluster, kafka, LatencyJob.System.CLONOS, 1_000, 0, 0, records, 0);
        long sized = (long) Math.max(records, probe.recordsPerSecond() * settings.capacitySeconds);
        return run(cluster, kafka, LatencyJob.System.CLONOS, 1_000, 0, 0, sized, 0)
                .recordsPerSecond();
    }

    private Run run(
            ClonosMiniCluster cluster,
            EmbeddedKafka kafka,
            LatencyJob.System system,
            long intervalMs,
            long rate,
            int repetition)
            throws Exception {
        return run(
                cluster,
                kafka,
                system,
                intervalMs,
                rate,
                repetition,
                rate * settings.seconds,
                settings.warmUpSeconds);
    }

    private Run run(
            ClonosMiniCluster cluster,
            EmbeddedKafka kafka,
            LatencyJob.System system,
            long intervalMs,
            long rate,
            int repetition,
            long records,
            int warmUpSeconds)
            throws Exception {
        String topic = "output-latency-" + (++runs);
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (Admin admin = Admin.create(props)) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        LatencyJob.build(
                env,
                system,
                kafka.bootstrapServers(),
                topic,
                records,
                rate,
                settings.parallelism,
                intervalMs);
        try (VisibleRecords visible =
                new VisibleRecords(
                        kafka.bootstrapServers(), topic, records, warmUpSeconds * 1000L)) {
            JobID job = cluster.submitJob(env.getStreamGraph().getJobGraph()).get().getJobID();
            long bound =
                    Math.max(settings.seconds, records / Math.max(1, rate)) + intervalMs / 1000;
            if (!cluster.requestJobResult(job).get(bound * 3 + 300, TimeUnit.SECONDS).isSuccess()) {
                throw new IllegalStateException("The benchmark's job failed: " + topic);
            }
            visible.awaitAll(Duration.ofMillis(intervalMs + 30_000));
            LatencyHistogram latencies = visible.latencies();
            latencies.write(
                    settings.output.resolve(
                            String.format(
                                    Locale.ROOT,
                                    "latency-%s-%dms-r%d.txt",
                                    system.name().toLowerCase(Locale.ROOT),
                                    intervalMs,
                                    repetition)));
            return new Run(
                    system,
                    intervalMs,
                    repetition,
                    latencies,
                    visible.recordsPerSecond(),
                    visible.lost(),
                    visible.duplicated());
        }
    }

    /** The medians per system and interval, the runs, the charts; returns the JSON line. */
    private String report(List<Run> all, long rate) throws Exception {
        Files.writeString(
                settings.output.resolve("runs.json"),
                all.stream().map(Run::json).collect(Collectors.joining(",\n", "[\n", "\n]\n")),
                StandardCharsets.UTF_8);
        List<String> variants = new ArrayList<>();
        for (long interval : settings.checkpointIntervalsMs) {
            Map<String, LatencyHistogram> merged = new LinkedHashMap<>();
            for (LatencyJob.System system : LatencyJob.System.values()) {
                List<Run> runs =
                        all.stream()
                                .filter(
                                        r ->
                                                r.system == system
                                                        && r.checkpointIntervalMs == interval)
                                .collect(Collectors.toList());
                LatencyHistogram histogram = new LatencyHistogram();
                runs.forEach(r -> histogram.add(r.latencies));
                merged.put(system.label, histogram);
                variants.add(
                        String.format(
                                Locale.ROOT,
                                "{\"system\":\"%s\",\"checkpoint_interval_ms\":%d,\"latency_p50_ms\":%d,\"latency_p99_ms\":%d,\"latency_p999_ms\":%d,\"latency_p99_ms_range\":[%d,%d],\"records_per_s\":%.0f,\"lost\":%d,\"duplicated\":%d,\"repetitions\":%d}",
                                system.label,
                                interval,
                                median(runs, r -> r.latencies.quantile(0.5)),
                                median(runs, r -> r.latencies.quantile(0.99)),
                                median(runs, r -> r.latencies.quantile(0.999)),
                                runs.stream()
                                        .mapToLong(r -> r.latencies.quantile(0.99))
                                        .min()
                                        .orElse(-1),
                                runs.stream()
                                        .mapToLong(r -> r.latencies.quantile(0.99))
                                        .max()
                                        .orElse(-1),
                                (double) median(runs, r -> (long) r.recordsPerSecond),
                                runs.stream().mapToLong(Run::lost).sum(),
                                runs.stream().mapToLong(Run::duplicated).sum(),
                                runs.size()));
            }
            Files.writeString(
                    settings.output.resolve("latency-cdf-" + interval + "ms.svg"),
                    LatencyCdfChart.svg(
                            "Checkpoints every "
                                    + interval
                                    + " ms, input "
                                    + rate
                                    + " records/s ("
                                    + settings.repetitions
                                    + " runs each)",
                            merged),
                    StandardCharsets.UTF_8);
        }
        String json =
                String.format(
                        Locale.ROOT,
                        "{\"rate_records_per_s\":%d,\"seconds\":%d,\"variants\":[%s]}",
                        rate,
                        settings.seconds,
                        String.join(",", variants));
        Files.writeString(settings.output.resolve("summary.json"), json + "\n");
        return json;
    }

    private static long median(List<Run> runs, java.util.function.ToLongFunction<Run> figure) {
        List<Long> values =
                runs.stream().map(figure::applyAsLong).sorted(Comparator.naturalOrder()).toList();
        return values.isEmpty() ? -1 : values.get(values.size() / 2);
    }
}
