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

import io.clonos.bench.kubernetes.KubernetesApi;
import io.clonos.cli.ClonosHome;
import io.clonos.cli.ProgramRunner;
import io.clonos.examples.CommittedLinesSink;
import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The failure experiment on Kubernetes ({@code bin/clonos bench pod-failure}, the chart's
 * experiment Job with {@code experiment.killPod}): against a running session cluster whose
 * TaskManagers are pods named as their resource ids (the chart's StatefulSet), it submits the
 * hash-chain job of the examples (whose output depends on every nondeterministic choice), waits for
 * a completed checkpoint, deletes a TaskManager pod through the Kubernetes API with a grace period
 * of 0 (its containers get SIGKILL, as on a node's loss), and waits for the job's end. It reports
 * which subtasks restarted (locally: only those of the deleted pod) and the hash chains' audit (no
 * input lost, duplicated or diverged), which the job's sink makes where it wrote its output and
 * publishes as accumulators. The victim hosts a subtask of the chain but not the sink, whose files
 * the audit reads.
 *
 * <p>Exit code 0 when the job finished exactly once with a local recovery, 1 otherwise; the summary
 * JSON is printed last and written to {@code <output>/pod-failure.json}.
 */
@Internal
public final class PodFailureExperiment {

    /** What the experiment runs and where. */
    public record Settings(
            Configuration cluster,
            KubernetesApi kubernetes,
            String namespace,
            long count,
            int rate,
            long checkpointMillis,
            Duration timeout,
            Path output,
            String jobOutput) {}

    private static final Set<String> TERMINAL = Set.of("FINISHED", "FAILED", "CANCELED");

    /**
     * The job's class, in examples/clonos-examples.jar, which is submitted and never on this class
     * path (the accumulator names below are compile-time constants, copied in by javac).
     */
    private static final String HASH_CHAIN_JOB = "io.clonos.examples.HashChainJob";

    private final Settings settings;
    private final ClonosHome home;
    private final PrintStream out;

    public PodFailureExperiment(Settings settings, ClonosHome home, PrintStream out) {
        this.settings = settings;
        this.home = home;
        this.out = out;
    }

    public int run() throws Exception {
        ClusterRestClient rest =
                ClusterRestClient.of(
                        settings.cluster().get(RestOptions.ADDRESS, "localhost"),
                        settings.cluster().get(RestOptions.PORT));
        Set<String> before = rest.jobIds();
        ProgramRunner.run(
                settings.cluster(),
                true,
                home.examplesJar().toFile(),
                HASH_CHAIN_JOB,
                new String[] {
                    "--count", String.valueOf(settings.count()),
                    "--rate", String.valueOf(settings.rate()),
                    "--checkpoint-interval", String.valueOf(settings.checkpointMillis()),
                    "--output", settings.jobOutput(),
                    "--audit"
                });
        String job = rest.awaitNewJob(before, settings.timeout());
        out.println("Submitted the hash-chain job " + job + " to " + rest.address());
        rest.awaitCompletedCheckpoint(job, settings.timeout());

        Map<String, String> hosts = rest.subtaskField(job, "taskmanager-id");
        String victim = victim(hosts);
        Set<String> victimSubtasks = new TreeSet<>();
        hosts.forEach(
                (subtask, host) -> {
                    if (host.equals(victim)) {
                        victimSubtasks.add(subtask);
                    }
                });
        out.println("Deleting pod " + settings.namespace() + "/" + victim + " (grace period 0)");
        long killedAt = System.currentTimeMillis();
        settings.kubernetes().deletePod(settings.namespace(), victim);

        String state = awaitTerminal(rest, job);
        long endedAfter = System.currentTimeMillis() - killedAt;
        Set<String> restarted = new TreeSet<>();
        rest.subtaskField(job, "attempt")
                .forEach(
                        (subtask, attempt) -> {
                            if (Integer.parseInt(attempt) > 0) {
                                restarted.add(subtask);
                            }
                        });
        Map<String, Long> audit = accumulators(rest, job);
        boolean local = restarted.equals(victimSubtasks);
        boolean exactlyOnce =
                audit.size() == 4
                        && audit.get(CommittedLinesSink.LOST) == 0
                        && audit.get(CommittedLinesSink.DUPLICATED) == 0
                        && audit.get(CommittedLinesSink.DIVERGED) == 0;

        ObjectMapper json = new ObjectMapper();
        ObjectNode summary = json.createObjectNode();
        summary.put("experiment", "pod-failure");
        ObjectNode setup = summary.putObject("setup");
        setup.put("processes", "pods");
        setup.put("failure", "pod deleted through the Kubernetes API, grace period 0");
        setup.put("namespace", settings.namespace());
        setup.put("records_per_source", settings.count());
        setup.put("rate_per_source", settings.rate());
        setup.put("checkpoint_interval_ms", settings.checkpointMillis());
        summary.put("job", job);
        summary.put("state", state);
        summary.put("killed_pod", victim);
        summary.putPOJO("killed_pod_subtasks", victimSubtasks);
        summary.putPOJO("restarted_subtasks", restarted);
        summary.put("subtasks", hosts.size());
        summary.put("local", local);
        summary.put("job_end_after_kill_ms", endedAfter);
        summary.putPOJO("audit", audit);
        summary.put("exactly_once", exactlyOnce);
        String printed = json.writerWithDefaultPrettyPrinter().writeValueAsString(summary);
        Files.createDirectories(settings.output());
        Files.writeString(
                settings.output().resolve("pod-failure.json"), printed, StandardCharsets.UTF_8);
        out.println(printed);
        return "FINISHED".equals(state) && local && exactlyOnce ? 0 : 1;
    }

    /** A TaskManager that hosts a subtask of the chain but not the sink (the audit's reader). */
    static String victim(Map<String, String> hosts) {
        Set<String> sinkHosts = new HashSet<>();
        hosts.forEach(
                (subtask, host) -> {
                    if (subtask.toLowerCase().contains("sink")) {
                        sinkHosts.add(host);
                    }
                });
        return hosts.entrySet().stream()
                .filter(e -> e.getKey().startsWith("chain"))
                .map(Map.Entry::getValue)
                .filter(host -> !sinkHosts.contains(host))
                .sorted()
                .findFirst()
                .orElseThrow(
                        () ->
                                new IllegalStateException(
                                        "Every TaskManager that runs the chain runs the sink too ("
                                                + hosts
                                                + "); the experiment needs one that does not: more"
                                                + " TaskManagers, or cluster.evenly-spread-out-slots:"
                                                + " true"));
    }

    private String awaitTerminal(ClusterRestClient rest, String job) throws Exception {
        long deadline = System.nanoTime() + settings.timeout().toNanos();
        String state = "";
        while (System.nanoTime() < deadline) {
            state = rest.jobState(job).orElse("");
            if (TERMINAL.contains(state)) {
                return state;
            }
            Thread.sleep(200);
        }
        return state + " after " + settings.timeout().toSeconds() + " s";
    }

    /** The audit's accumulators of the finished job; empty if the sink published none. */
    private static Map<String, Long> accumulators(ClusterRestClient rest, String job)
            throws Exception {
        Map<String, Long> audit = new TreeMap<>();
        List<String> names =
                List.of(
                        CommittedLinesSink.LINKS,
                        CommittedLinesSink.LOST,
                        CommittedLinesSink.DUPLICATED,
                        CommittedLinesSink.DIVERGED);
        for (JsonNode accumulator :
                rest.get("/jobs/" + job + "/accumulators").path("user-task-accumulators")) {
            String name = accumulator.path("name").asText();
            if (names.contains(name)) {
                audit.put(name, Long.parseLong(accumulator.path("value").asText()));
            }
        }
        return audit;
    }
}
