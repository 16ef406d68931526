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

package io.clonos.cli;

import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The main demo: an embedded Clonos cluster runs the unchanged example job (submitted over REST
 * exactly as to a standalone cluster) and shows the tasks' epochs advancing with every checkpoint;
 * midway one task fails and is recovered locally; at the end the demo shows that only that task was
 * restarted and checks the job's results.
 */
@Internal
final class Demo {

    static final int TASK_MANAGERS = 2;
    static final int SLOTS = 2;

    private static final Set<String> TERMINAL = Set.of("FINISHED", "FAILED", "CANCELED");

    /** The demo fails this operator's first subtask after {@link #FAIL_AFTER_MS}. */
    private static final String FAILED_VERTEX = "running-sum";

    private static final long FAIL_AFTER_MS = 2_500;

    private final PrintStream out;

    Demo(PrintStream out) {
        this.out = out;
    }

    /**
     * Returns whether the job finished with correct results (and, with a failure, recovered
     * locally).
     */
    boolean run(
            ClonosHome home,
            Map<String, String> dynamicProperties,
            long count,
            int rate,
            int keys,
            boolean injectFailure)
            throws Exception {
        Configuration config = home.loadConfiguration(dynamicProperties);
        if (injectFailure) {
            // the demo fails one of its tasks the way bin/clonos fail does
            config.setString("clonos.fault-injection.enabled", "true");
        }
        config.set(RestOptions.BIND_PORT, "0");
        Path output = Files.createTempDirectory("clonos-demo-");

        out.printf(
                "Starting an embedded Clonos cluster: %d TaskManagers x %d slots%n",
                TASK_MANAGERS, SLOTS);
        try (ClonosMiniCluster cluster = ClonosMiniCluster.create(config, TASK_MANAGERS, SLOTS)) {
            cluster.start();
            URI restAddress = cluster.getRestAddress().get();
            Configuration client = new Configuration(config);
            client.set(RestOptions.ADDRESS, restAddress.getHost());
            client.set(RestOptions.PORT, restAddress.getPort());
            ClusterRestClient rest = new ClusterRestClient(restAddress);

            out.printf(
                    "Submitting the unchanged Flink job %s over REST (%s)%n",
                    home.examplesJar().getFileName(), restAddress);
            ProgramRunner.run(
                    client,
                    true,
                    home.examplesJar().toFile(),
                    null,
                    new String[] {
                        "--count",
                        String.valueOf(count),
                        "--rate",
                        String.valueOf(rate),
                        "--keys",
                        String.valueOf(keys),
                        "--output",
                        output.toString()
                    });

            String jobId = rest.get("/jobs").path("jobs").get(0).path("id").asText();
            Runnable failure = injectFailure ? () -> fail(client, jobId) : () -> {};
            String state = monitor(rest, jobId, failure);
            long checkpoints = rest.completedCheckpoints(jobId);
            out.printf("Job %s %s with %d checkpoints completed.%n", jobId, state, checkpoints);
            boolean recoveredLocally = !injectFailure || reportAttempts(rest, jobId);
            return "FINISHED".equals(state)
                    && checkpoints > 0
                    && recoveredLocally
                    && report(
                            RunningSumOutput.finalTotals(output),
                            RunningSumOutput.expectedTotals(count, keys));
        }
    }

    /**
     * Fails the first running-sum subtask through the JobManager, as {@code bin/clonos fail} does.
     */
    private void fail(Configuration client, String jobId) {
        try {
            out.println(
                    "  >>> "
                            + TaskFailer.fail(client, jobId, FAILED_VERTEX, 0)
                            + ": Clonos recovers it alone, the rest of the job keeps running");
        } catch (Exception e) {
            out.println("  >>> could not fail " + FAILED_VERTEX + "[0]: " + e);
        }
    }

    /** Prints each subtask's attempt; true if only the failed subtask was restarted. */
    private boolean reportAttempts(ClusterRestClient rest, String jobId) throws Exception {
        boolean local = true;
        for (Map.Entry<String, JsonNode> subtask : rest.subtasks(jobId).entrySet()) {
            String name = subtask.getKey();
            int attempt = subtask.getValue().path("attempt").asInt();
            boolean failed = name.startsWith(FAILED_VERTEX) && name.endsWith("[0]");
            local &= attempt == (failed ? 1 : 0);
            String vertex = name.substring(0, name.lastIndexOf('['));
            out.printf(
                    "  %-40s attempt %d%s%n",
                    shortName(vertex) + name.substring(name.lastIndexOf('[')),
                    attempt,
                    failed ? "  (failed and recovered locally)" : "");
        }
        return local;
    }

    private String monitor(ClusterRestClient rest, String jobId, Runnable failure)
            throws Exception {
        long start = System.nanoTime();
        long nextReport = 0;
        boolean failed = false;
        while (true) {
            JsonNode job = rest.get("/jobs/" + jobId);
            String state = job.path("state").asText();
            if (TERMINAL.contains(state)) {
                return state;
            }
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            if (!failed && elapsedMs >= FAIL_AFTER_MS) {
                failed = true;
                failure.run();
            }
            if (elapsedMs >= nextReport) {
                out.printf(
                        "  %5.1f s  %-9s checkpoints %-3d %s%n",
                        elapsedMs / 1000.0,
                        state,
                        rest.completedCheckpoints(jobId),
                        epochs(rest, jobId, job));
                nextReport += 1000;
            }
            Thread.sleep(200);
        }
    }

    private static String epochs(ClusterRestClient rest, String jobId, JsonNode job) {
        List<String> parts = new ArrayList<>();
        for (JsonNode vertex : job.path("vertices")) {
            List<String> subtasks = new ArrayList<>();
            for (int i = 0; i < vertex.path("parallelism").asInt(); i++) {
                subtasks.add(
                        rest.subtaskMetric(jobId, vertex.path("id").asText(), i, "clonos.epoch")
                                .orElse("-"));
            }
            parts.add(shortName(vertex.path("name").asText()) + " " + subtasks);
        }
        return "epochs: " + String.join("  ", parts);
    }

    private static String shortName(String vertexName) {
        String name = vertexName.replace("Source: ", "");
        int arrow = name.indexOf(" -> ");
        return arrow < 0 ? name : name.substring(0, arrow) + "…";
    }

    private boolean report(
            Map<Long, RunningSumOutput.KeyTotal> actual,
            Map<Long, RunningSumOutput.KeyTotal> expected) {
        out.printf("%5s %8s %14s %14s  %s%n", "key", "count", "sum", "expected sum", "");
        boolean correct = actual.keySet().equals(expected.keySet());
        for (Map.Entry<Long, RunningSumOutput.KeyTotal> e : expected.entrySet()) {
            RunningSumOutput.KeyTotal got = actual.get(e.getKey());
            boolean ok =
                    got != null && got.count == e.getValue().count && got.sum == e.getValue().sum;
            correct &= ok;
            out.printf(
                    "%5d %8s %14s %14d  %s%n",
                    e.getKey(),
                    got == null ? "-" : got.count,
                    got == null ? "-" : got.sum,
                    e.getValue().sum,
                    ok ? "ok" : "WRONG");
        }
        out.println(
                correct
                        ? "Results correct: every key's running sum is complete."
                        : "Results WRONG.");
        return correct;
    }
}
