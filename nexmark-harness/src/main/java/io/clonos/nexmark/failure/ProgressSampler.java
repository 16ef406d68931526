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

package io.clonos.nexmark.failure;

import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import javax.annotation.Nullable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongUnaryOperator;

/**
 * Samples, through a cluster's REST API, how far each subtask of a running job has got: the
 * watermark it receives, the watermark and event-time lag of the sources, its record counts, how
 * busy and how back-pressured it was and, where the cluster enables them, its RocksDB metrics; and
 * each TaskManager's CPU time. The latency of a result says when it left; these say where the time
 * before it went (a source catching up, a watermark held back by one input, a window firing), which
 * is what a recovery's breakdown after the replacements run needs.
 *
 * <p>Flink's REST API serves metrics from a cache that its JobManager refreshes every {@code
 * metrics.fetcher.update-interval} (10 s by default); the experiment sets it to the sampling
 * interval on both systems, so both pay the same for it. Samples are taken on a thread of their own
 * so that the losses keep their schedule.
 */
@Internal
final class ProgressSampler implements AutoCloseable {

    /** The task and operator metrics sampled (operator metrics by their name's end). */
    private static final List<String> TASK_METRICS =
            List.of(
                    "currentInputWatermark",
                    "numRecordsIn",
                    "numRecordsOut",
                    "busyTimeMsPerSecond",
                    "backPressuredTimeMsPerSecond");

    private static final List<String> OPERATOR_METRIC_ENDINGS =
            List.of(".currentEmitEventTimeLag", ".currentOutputWatermark");

    /**
     * RocksDB's native metrics of an operator's state, present only where the cluster enables them
     * ({@code state.backend.rocksdb.metrics.*}, e.g. compactions and write stalls).
     */
    private static final String ROCKSDB_METRICS = ".rocksdb_";

    /** A TaskManager's CPU time (ns), whose rate says how busy its JVM was. */
    static final String TASK_MANAGER_CPU = "Status.JVM.CPU.Time";

    /** The CSV's subtask of a TaskManager's own metrics. */
    static final int NO_SUBTASK = -1;

    private final ClusterRestClient rest;
    private final String job;
    private final ScheduledExecutorService thread =
            Executors.newSingleThreadScheduledExecutor(
                    r -> {
                        Thread t = new Thread(r, "nexmark-progress-sampler");
                        t.setDaemon(true);
                        return t;
                    });
    private final List<Sample> samples = Collections.synchronizedList(new ArrayList<>());
    private final List<Vertex> vertices = new ArrayList<>();
    private final List<String> taskManagers = new ArrayList<>();
    private long rounds;

    /** How many samples apart the metrics of each vertex are listed again. */
    private static final int REDISCOVER_EVERY = 10;

    /** Clonos's REST API lists standby tasks as vertices of their own, named with this prefix. */
    private static final String STANDBY_PREFIX = "Standby: ";

    private record Vertex(String id, String name, int parallelism, List<String> metrics) {}

    /** One value of one subtask's metric, at wall-clock time {@code at}. */
    record Sample(long at, String vertex, int subtask, String metric, long value) {}

    /** A sampler of {@code job} if {@code --progress-interval} asks for one, else null. */
    @Nullable
    static ProgressSampler of(FailureSettings settings, ClusterRestClient rest, JobID job) {
        return settings.progressIntervalMs > 0
                ? new ProgressSampler(rest, job.toHexString(), settings.progressIntervalMs)
                : null;
    }

    /** Has the REST API refresh its metrics at the sampling interval, if sampling. */
    static void configure(FailureSettings settings, Configuration config) {
        if (settings.progressIntervalMs > 0) {
            config.set(
                    MetricOptions.METRIC_FETCHER_UPDATE_INTERVAL,
                    Duration.ofMillis(settings.progressIntervalMs));
        }
    }

    /**
     * Stops {@code sampler} (if any) and writes its samples to {@code <query>-progress-<label>.csv}
     * in the output directory.
     */
    static void write(
            @Nullable ProgressSampler sampler,
            FailureSettings settings,
            String label,
            long killedAt,
            EventPublisher publisher)
            throws IOException {
        if (sampler != null) {
            sampler.close();
            sampler.write(
                    settings.output.resolve(settings.query.id() + "-progress-" + label + ".csv"),
                    killedAt,
                    publisher::dueAt);
        }
    }

    private ProgressSampler(ClusterRestClient rest, String job, long intervalMs) {
        this.rest = rest;
        this.job = job;
        thread.scheduleWithFixedDelay(this::sample, 0, intervalMs, TimeUnit.MILLISECONDS);
    }

    private void sample() {
        try {
            // metrics appear in the REST cache one fetch at a time: look for more now and then
            if (rounds++ % REDISCOVER_EVERY == 0) {
                discover();
            }
            for (Vertex vertex : vertices) {
                if (vertex.metrics().isEmpty()) {
                    continue;
                }
                for (int subtask = 0; subtask < vertex.parallelism(); subtask++) {
                    sample(vertex, subtask);
                }
            }
            for (String taskManager : taskManagers) {
                sampleTaskManager(taskManager);
            }
        } catch (RuntimeException e) {
            // a sample that fails (the job ending, a JobManager busy) is a gap, not an error
        }
    }

    private void sample(Vertex vertex, int subtask) {
        long at = System.currentTimeMillis();
        record(
                at,
                vertex.name(),
                subtask,
                rest.subtaskMetrics(job, vertex.id(), subtask, vertex.metrics()));
    }

    private void sampleTaskManager(String id) {
        long at = System.currentTimeMillis();
        record(
                at,
                "taskmanager " + id,
                NO_SUBTASK,
                rest.tryGet("/taskmanagers/" + id + "/metrics?get=" + TASK_MANAGER_CPU));
    }

    /** Keeps the numeric values of a REST metrics answer ({@code [{"id": .., "value": ..}]}). */
    private void record(long at, String vertex, int subtask, Optional<JsonNode> answer) {
        if (answer.isEmpty() || !answer.get().isArray()) {
            return;
        }
        for (JsonNode value : answer.get()) {
            String metric = value.path("id").asText();
            parse(value.path("value").asText())
                    .ifPresent(v -> samples.add(new Sample(at, vertex, subtask, metric, v)));
        }
    }

    /**
     * The job's vertices and, for each, the sampled metrics its first subtask reports so far; the
     * cluster's TaskManagers.
     */
    private void discover() {
        rest.tryGet("/taskmanagers")
                .ifPresent(
                        listed -> {
                            taskManagers.clear();
                            listed.path("taskmanagers")
                                    .forEach(tm -> taskManagers.add(tm.path("id").asText()));
                        });
        JsonNode details = rest.tryGet("/jobs/" + job).orElse(null);
        if (details == null) {
            return;
        }
        List<Vertex> found = new ArrayList<>();
        for (JsonNode vertex : details.path("vertices")) {
            String id = vertex.path("id").asText();
            if (vertex.path("name").asText().startsWith(STANDBY_PREFIX)) {
                // standbys process nothing; sampling them would load one system's REST API more
                continue;
            }
            List<String> metrics = new ArrayList<>();
            rest.subtaskMetrics(job, id, 0, List.of())
                    .ifPresent(
                            listed ->
                                    listed.forEach(
                                            metric -> {
                                                String name = metric.path("id").asText();
                                                if (TASK_METRICS.contains(name)
                                                        || name.contains(ROCKSDB_METRICS)
                                                        || OPERATOR_METRIC_ENDINGS.stream()
                                                                .anyMatch(name::endsWith)) {
                                                    metrics.add(name);
                                                }
                                            }));
            found.add(
                    new Vertex(
                            id,
                            vertex.path("name").asText(),
                            vertex.path("parallelism").asInt(),
                            metrics));
        }
        // a vertex keeps the metrics found before (a replacement's appear a fetch later)
        for (Vertex vertex : found) {
            vertices.stream()
                    .filter(known -> known.id().equals(vertex.id()))
                    .flatMap(known -> known.metrics().stream())
                    .filter(metric -> !vertex.metrics().contains(metric))
                    .forEach(vertex.metrics()::add);
        }
        vertices.clear();
        vertices.addAll(found);
    }

    private static Optional<Long> parse(String value) {
        try {
            return Optional.of(Math.round(Double.parseDouble(value)));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }

    private void write(Path file, long killedAt, LongUnaryOperator dueAt) throws IOException {
        List<String> lines;
        synchronized (samples) {
            lines = csv(samples, killedAt, dueAt);
        }
        Files.createDirectories(file.getParent());
        Files.write(file, lines);
    }

    /**
     * The samples as CSV lines, times in ms since {@code killedAt}; a watermark is written as the
     * time its event was due (by {@code dueAt}) since the kill, so that it compares with the
     * sample's own time (its lag is their difference); Flink's "no watermark yet" is left empty.
     */
    static List<String> csv(List<Sample> samples, long killedAt, LongUnaryOperator dueAt) {
        List<String> lines = new ArrayList<>();
        lines.add("ms_since_kill,vertex,subtask,metric,value");
        for (Sample s : samples) {
            String value;
            if (s.metric().toLowerCase(Locale.ROOT).endsWith("watermark")) {
                value =
                        s.value() == Long.MIN_VALUE || s.value() == Long.MAX_VALUE
                                ? ""
                                : String.valueOf(dueAt.applyAsLong(s.value()) - killedAt);
            } else {
                value = String.valueOf(s.value());
            }
            lines.add(
                    (s.at() - killedAt)
                            + ",\""
                            + s.vertex().replace("\"", "'")
                            + "\","
                            + s.subtask()
                            + ","
                            + s.metric()
                            + ","
                            + value);
        }
        return lines;
    }
}
