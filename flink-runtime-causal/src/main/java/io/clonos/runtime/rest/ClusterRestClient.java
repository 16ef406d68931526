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

package io.clonos.runtime.rest;

import io.clonos.runtime.standby.StandbyVertices;

import org.apache.flink.annotation.Internal;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;

/**
 * Reads a cluster's state through Flink's REST API: the same API the Flink CLI and web UI use, so
 * what the launcher reports is what any Flink tool would see.
 */
@Internal
public final class ClusterRestClient {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    public ClusterRestClient(URI base) {
        this.base = base;
    }

    public static ClusterRestClient of(String host, int port) {
        return new ClusterRestClient(URI.create("http://" + host + ":" + port));
    }

    public URI address() {
        return base;
    }

    /** GETs a REST path; empty when the endpoint does not answer (yet) or answers an error. */
    public Optional<JsonNode> tryGet(String path) {
        try {
            return Optional.of(get(path));
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    public JsonNode get(String path) throws IOException, InterruptedException {
        HttpRequest request =
                HttpRequest.newBuilder(base.resolve(path))
                        .timeout(Duration.ofSeconds(10))
                        .GET()
                        .build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException(
                    "GET " + path + " answered " + response.statusCode() + ": " + response.body());
        }
        return JSON.readTree(response.body());
    }

    /** PATCHes a REST path (Flink cancels a job with {@code PATCH /jobs/:jobid?mode=cancel}). */
    public void patch(String path) throws IOException, InterruptedException {
        HttpRequest request =
                HttpRequest.newBuilder(base.resolve(path))
                        .timeout(Duration.ofSeconds(10))
                        .method("PATCH", HttpRequest.BodyPublishers.noBody())
                        .build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() / 100 != 2) {
            throw new IOException(
                    "PATCH "
                            + path
                            + " answered "
                            + response.statusCode()
                            + ": "
                            + response.body());
        }
    }

    /** The value of a subtask's metric, if the subtask reports it. */
    public Optional<String> subtaskMetric(
            String jobId, String vertexId, int subtask, String metric) {
        return subtaskMetrics(jobId, vertexId, subtask, List.of(metric))
                .filter(values -> values.size() > 0)
                .map(values -> values.get(0).path("value").asText());
    }

    /**
     * A subtask's metrics as Flink's REST API answers ({@code [{"id": .., "value": ..}]}): the
     * values of {@code metrics}, or, if none are named, the ids of every metric it reports. Empty
     * if the endpoint does not answer with such a list.
     */
    public Optional<JsonNode> subtaskMetrics(
            String jobId, String vertexId, int subtask, List<String> metrics) {
        return tryGet(
                        "/jobs/"
                                + jobId
                                + "/vertices/"
                                + vertexId
                                + "/subtasks/"
                                + subtask
                                + "/metrics"
                                + (metrics.isEmpty() ? "" : "?get=" + String.join(",", metrics)))
                .filter(JsonNode::isArray);
    }

    /**
     * The REST details of every subtask of a job ({@code attempt}, {@code taskmanager-id}, ...),
     * keyed {@code "<vertex name>[<subtask index>]"}, in vertex order.
     */
    public Map<String, JsonNode> subtasks(String jobId) throws IOException, InterruptedException {
        Map<String, JsonNode> subtasks = new LinkedHashMap<>();
        for (JsonNode vertex : get("/jobs/" + jobId).path("vertices")) {
            for (JsonNode subtask :
                    get("/jobs/" + jobId + "/vertices/" + vertex.path("id").asText())
                            .path("subtasks")) {
                subtasks.put(
                        vertex.path("name").asText() + "[" + subtask.path("subtask").asInt() + "]",
                        subtask);
            }
        }
        return subtasks;
    }

    /**
     * When the current attempt of every subtask of a job entered each execution state (Flink's
     * {@code /jobs/:jobid/vertices/:vertexid/subtasktimes}; milliseconds since the epoch, states it
     * never entered left out), keyed {@code "<vertex name>[<subtask index>]"} as {@link #subtasks}.
     */
    public Map<String, Map<String, Long>> stateTimestamps(String jobId)
            throws IOException, InterruptedException {
        Map<String, Map<String, Long>> subtasks = new LinkedHashMap<>();
        for (JsonNode vertex : get("/jobs/" + jobId).path("vertices")) {
            String path = "/jobs/" + jobId + "/vertices/" + vertex.path("id").asText();
            for (JsonNode times : get(path + "/subtasktimes").path("subtasks")) {
                Map<String, Long> timestamps = new LinkedHashMap<>();
                times.path("timestamps")
                        .fields()
                        .forEachRemaining(
                                state -> {
                                    if (state.getValue().asLong(0) > 0) {
                                        timestamps.put(state.getKey(), state.getValue().asLong());
                                    }
                                });
                subtasks.put(
                        vertex.path("name").asText() + "[" + times.path("subtask").asInt() + "]",
                        timestamps);
            }
        }
        return subtasks;
    }

    /**
     * The job's own subtasks, without Clonos's standbys (whose vertices' names start with {@link
     * StandbyVertices#NAME_PREFIX}): a standby's new attempts after an activation are not part of a
     * recovery, and Flink has none to compare with.
     */
    public Map<String, JsonNode> primarySubtasks(String jobId)
            throws IOException, InterruptedException {
        Map<String, JsonNode> primaries = new LinkedHashMap<>(subtasks(jobId));
        primaries.keySet().removeIf(name -> name.startsWith(StandbyVertices.NAME_PREFIX));
        return primaries;
    }

    /**
     * The execution-state timestamps ({@link #stateTimestamps}) of the job's own subtasks that
     * restarted (attempt above 0): the replacements a recovery waited for.
     */
    public List<Map<String, Long>> replacementStates(String jobId)
            throws IOException, InterruptedException {
        Map<String, Map<String, Long>> timestamps = stateTimestamps(jobId);
        List<Map<String, Long>> replaced = new ArrayList<>();
        primarySubtasks(jobId)
                .forEach(
                        (name, subtask) -> {
                            if (subtask.path("attempt").asInt() > 0
                                    && timestamps.containsKey(name)) {
                                replaced.add(timestamps.get(name));
                            }
                        });
        return replaced;
    }

    /**
     * One field of every subtask's REST details ({@code attempt}, {@code taskmanager-id}, {@code
     * status}, ...), keyed and sorted as {@code "<vertex name>[<subtask index>]"}.
     */
    public Map<String, String> subtaskField(String jobId, String field)
            throws IOException, InterruptedException {
        Map<String, String> values = new TreeMap<>();
        subtasks(jobId)
                .forEach((subtask, details) -> values.put(subtask, details.path(field).asText()));
        return values;
    }

    /** The ids of the jobs the cluster knows, running or ended. */
    public Set<String> jobIds() throws IOException, InterruptedException {
        Set<String> ids = new HashSet<>();
        for (JsonNode job : get("/jobs").path("jobs")) {
            ids.add(job.path("id").asText());
        }
        return ids;
    }

    /**
     * The id of a job the cluster knows that is not among {@code before} (one just submitted);
     * fails after {@code timeout}.
     */
    public String awaitNewJob(Set<String> before, Duration timeout)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            Set<String> now = jobIds();
            now.removeAll(before);
            if (!now.isEmpty()) {
                return now.iterator().next();
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException(
                "The submitted job did not show up at "
                        + base
                        + " within "
                        + timeout.toSeconds()
                        + " s");
    }

    /** How many checkpoints of a job have completed. */
    public long completedCheckpoints(String jobId) {
        return tryGet("/jobs/" + jobId + "/checkpoints")
                .map(stats -> stats.path("counts").path("completed").asLong(0))
                .orElse(0L);
    }

    /**
     * The full size of a job's state at its latest completed checkpoint (Flink's {@code
     * state_size}, not only what an incremental checkpoint added), in bytes; -1 if none completed
     * or the JobManager did not answer.
     */
    public long checkpointedStateBytes(String jobId) {
        return tryGet("/jobs/" + jobId + "/checkpoints")
                .map(stats -> stats.path("latest").path("completed").path("state_size").asLong(-1))
                .orElse(-1L);
    }

    /** Waits until a job completed a checkpoint; fails after {@code timeout}. */
    public void awaitCompletedCheckpoint(String jobId, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (completedCheckpoints(jobId) < 1) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "Job "
                                + jobId
                                + " completed no checkpoint within "
                                + timeout.toSeconds()
                                + " s");
            }
            Thread.sleep(50);
        }
    }

    /**
     * Every exception in a job's exception history (Flink's {@code /jobs/:jobid/exceptions}), with
     * the exceptions that came with each, oldest first: the task's name, the exception's first line
     * and its causes' ({@code " <- "} between them).
     */
    public List<String> exceptions(String jobId) throws IOException, InterruptedException {
        List<String> messages = new ArrayList<>();
        JsonNode history =
                get("/jobs/" + jobId + "/exceptions?maxExceptions=1000")
                        .path("exceptionHistory")
                        .path("entries");
        for (JsonNode entry : history) {
            messages.add(summary(entry));
            for (JsonNode concurrent : entry.path("concurrentExceptions")) {
                messages.add(summary(concurrent));
            }
        }
        Collections.reverse(messages);
        return messages;
    }

    /**
     * When the oldest exception in a job's history whose stack trace contains {@code text} was
     * recorded (milliseconds since the epoch), if there is one.
     */
    public OptionalLong firstExceptionAt(String jobId, String text)
            throws IOException, InterruptedException {
        OptionalLong first = OptionalLong.empty();
        for (JsonNode entry :
                get("/jobs/" + jobId + "/exceptions?maxExceptions=1000")
                        .path("exceptionHistory")
                        .path("entries")) {
            List<JsonNode> exceptions = new ArrayList<>();
            exceptions.add(entry);
            entry.path("concurrentExceptions").forEach(exceptions::add);
            for (JsonNode exception : exceptions) {
                long at = exception.path("timestamp").asLong(-1);
                if (at >= 0
                        && exception.path("stacktrace").asText("").contains(text)
                        && (first.isEmpty() || at < first.getAsLong())) {
                    first = OptionalLong.of(at);
                }
            }
        }
        return first;
    }

    private static String summary(JsonNode exception) {
        List<String> lines = new ArrayList<>();
        String[] trace = exception.path("stacktrace").asText("").split("\n");
        lines.add(trace[0].trim());
        for (String line : trace) {
            if (line.startsWith("Caused by: ")) {
                lines.add(line.substring("Caused by: ".length()).trim());
            }
        }
        String task = exception.path("taskName").asText("");
        String summary = String.join(" <- ", lines);
        return task.isEmpty() || "null".equals(task) ? summary : task + ": " + summary;
    }

    public Optional<String> jobState(String jobId) {
        return tryGet("/jobs/" + jobId).map(job -> job.path("state").asText());
    }
}
