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

import io.clonos.examples.CommittedLinesSink;
import io.clonos.examples.GeneratedJob;
import io.clonos.examples.chaos.ChaosPlan;
import io.clonos.examples.chaos.ChaosVerdict;
import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.annotation.Internal;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongFunction;
import java.util.stream.Stream;

/**
 * {@code bin/clonos chaos}: generated jobs on a standalone cluster of its own (separate TaskManager
 * JVMs, slots spread), TaskManagers killed with SIGKILL at random times, each run judged by {@link
 * ChaosVerdict}: exactly once, local unless the documented fallback holds, in time. Each run prints
 * its seed, job graph, faults and verdict; the end, a summary. A failed run's seed reproduces it
 * ({@code --seed S --runs 1}). Killed TaskManagers are replaced between runs, as a resource manager
 * would.
 */
@Internal
final class ChaosCommand {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private final ClonosHome home;
    private final Map<String, String> properties;
    private final int taskManagers;
    private final int slots;
    private final long recoveryBoundMillis;
    private final PrintStream out;
    private final StandaloneCluster cluster;
    private final ClusterRestClient rest;
    private final Set<String> alive = new TreeSet<>();
    private int nextTaskManager;

    ChaosCommand(
            ClonosHome home,
            Map<String, String> properties,
            int taskManagers,
            int slots,
            long recoveryBoundMillis,
            PrintStream out) {
        this.home = home;
        this.properties = new LinkedHashMap<>(properties);
        this.properties.putIfAbsent("cluster.evenly-spread-out-slots", "true");
        this.taskManagers = taskManagers;
        this.slots = slots;
        this.recoveryBoundMillis = recoveryBoundMillis;
        this.out = out;
        this.cluster = new StandaloneCluster(home, out);
        this.rest = StandaloneCluster.restClient(home.loadConfiguration(this.properties));
    }

    /**
     * Runs plans until {@code runs} are done or {@code minutes} are over (whichever is given; both:
     * whichever comes first); returns whether every run passed.
     */
    boolean run(
            LongFunction<ChaosPlan> plans, long firstSeed, int runs, double minutes, Path output)
            throws Exception {
        Files.createDirectories(output);
        cluster.start(properties, taskManagers, slots);
        for (int i = 0; i < taskManagers; i++) {
            alive.add(StandaloneCluster.TASKMANAGER_PREFIX + i);
        }
        nextTaskManager = taskManagers;
        Summary summary = new Summary();
        long deadline = minutes > 0 ? System.nanoTime() + (long) (minutes * 60e9) : Long.MAX_VALUE;
        try {
            for (long seed = firstSeed;
                    (runs <= 0 || summary.runs < runs) && System.nanoTime() < deadline;
                    seed++) {
                ChaosPlan plan = plans.apply(seed);
                out.println("run " + (summary.runs + 1) + ": " + plan);
                ChaosVerdict verdict = runOnce(plan, output.resolve("seed-" + seed));
                summary.add(verdict);
                out.println("  " + verdict.summary());
                replaceLostTaskManagers();
            }
        } finally {
            cluster.stop();
        }
        summary.print(out);
        return summary.failed == 0;
    }

    private ChaosVerdict runOnce(ChaosPlan plan, Path dir) throws Exception {
        Path links = Files.createDirectories(dir.resolve("links"));
        Set<String> before = rest.jobIds();
        Map<String, String> jobProperties = new LinkedHashMap<>(properties);
        jobProperties.put("clonos.determinant-sharing-depth", String.valueOf(plan.dsd));
        ProgramRunner.run(
                home.loadConfiguration(jobProperties),
                true,
                home.examplesJar().toFile(),
                GeneratedJob.class.getName(),
                plan.jobArguments(links.toString()).toArray(new String[0]));
        String job = rest.awaitNewJob(before, START_TIMEOUT);
        rest.awaitCompletedCheckpoint(job, START_TIMEOUT);
        // the plan's time runs from when the sources run: on a loaded cluster the other tasks may
        // take seconds longer to start, and the first checkpoint with them, while the sources
        // already emit; a loss waits for that checkpoint all the same
        long started = sourcesStarted(job);

        List<Set<String>> lost = new ArrayList<>();
        long lastLoss = 0;
        long next = started;
        Map<String, Set<String>> hosted = new TreeMap<>();
        for (long delay : plan.killDelays) {
            if (delay > 0 || lost.isEmpty()) {
                // a loss that is overdue (the first checkpoint came late) comes now; the next one
                // keeps its distance to it
                next = Math.max(next + delay, System.currentTimeMillis());
                Thread.sleep(Math.max(0, next - System.currentTimeMillis()));
                hosted = hostedSubtasks(job);
            }
            // losses at once are chosen from one view of the job and follow each other without
            // asking the JobManager again: its REST answers slowly while it handles the first
            // loss, and a kill a second later would be a staggered one
            hosted.keySet().retainAll(alive);
            if (hosted.isEmpty()) {
                break;
            }
            String victim = plan.nextVictim(new ArrayList<>(hosted.keySet()));
            ProcessHandle process =
                    cluster.process(victim)
                            .orElseThrow(() -> new IllegalStateException(victim + " does not run"));
            process.destroyForcibly();
            lastLoss = System.currentTimeMillis();
            alive.remove(victim);
            lost.add(hosted.get(victim));
            out.println(
                    "  SIGKILL "
                            + victim
                            + " (pid "
                            + process.pid()
                            + ") with "
                            + hosted.get(victim));
        }

        if (lost.isEmpty()) {
            // the job ended before its first loss (the verdict fails the run): time from now
            lastLoss = System.currentTimeMillis();
        }
        long remaining = plan.plannedMillis() - (lastLoss - started);
        long hardLimit =
                ChaosVerdict.boundAfterLastLoss(plan, remaining, false, recoveryBoundMillis)
                        + 30_000;
        long after = awaitEnd(job, lastLoss, hardLimit);
        Map<String, Integer> attempts = new TreeMap<>();
        rest.subtasks(job)
                .forEach(
                        (subtask, details) ->
                                attempts.put(subtask, details.path("attempt").asInt()));
        return ChaosVerdict.judge(
                plan,
                attempts,
                lost,
                rest.exceptions(job),
                CommittedLinesSink.committedLines(links),
                after,
                remaining,
                recoveryBoundMillis);
    }

    /**
     * Milliseconds from the last loss to the job's end, or -1 (and the job cancelled) past the
     * limit.
     */
    private long awaitEnd(String job, long lastLoss, long limitMillis) throws Exception {
        long deadline = lastLoss + limitMillis;
        while (System.currentTimeMillis() < deadline) {
            Optional<JsonNode> details = rest.tryGet("/jobs/" + job);
            if (details.isPresent()) {
                String state = details.get().path("state").asText();
                if (state.equals("FINISHED")
                        || state.equals("FAILED")
                        || state.equals("CANCELED")) {
                    return state.equals("FINISHED")
                            ? details.get().path("end-time").asLong() - lastLoss
                            : -1;
                }
            }
            Thread.sleep(100);
        }
        rest.patch("/jobs/" + job + "?mode=cancel");
        return -1;
    }

    /**
     * Per running TaskManager that runs subtasks of the job: their names (sorted by TaskManager).
     */
    /** When the first source subtask of a job started running (now, if none is known to). */
    private long sourcesStarted(String job) throws Exception {
        return rest.stateTimestamps(job).entrySet().stream()
                .filter(subtask -> subtask.getKey().startsWith("Source: "))
                .map(subtask -> subtask.getValue().get("RUNNING"))
                .filter(Objects::nonNull)
                .mapToLong(Long::longValue)
                .min()
                .orElse(System.currentTimeMillis());
    }

    private Map<String, Set<String>> hostedSubtasks(String job) throws Exception {
        Map<String, Set<String>> hosted = new TreeMap<>();
        rest.subtasks(job)
                .forEach(
                        (subtask, details) -> {
                            String status = details.path("status").asText();
                            if (status.equals("RUNNING")
                                    || status.equals("INITIALIZING")
                                    || status.equals("DEPLOYING")) {
                                hosted.computeIfAbsent(
                                                details.path("taskmanager-id").asText(),
                                                tm -> new TreeSet<>())
                                        .add(subtask);
                            }
                        });
        return hosted;
    }

    private void replaceLostTaskManagers() throws Exception {
        while (alive.size() < taskManagers) {
            String name = StandaloneCluster.TASKMANAGER_PREFIX + nextTaskManager++;
            cluster.startTaskManager(properties, slots, name);
            alive.add(name);
        }
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (!registeredTaskManagers().equals(alive)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "The TaskManagers "
                                + alive
                                + " did not register alone within "
                                + START_TIMEOUT.toSeconds()
                                + " s: "
                                + registeredTaskManagers());
            }
            Thread.sleep(250);
        }
    }

    private Set<String> registeredTaskManagers() throws Exception {
        Set<String> ids = new TreeSet<>();
        for (JsonNode tm : rest.get("/taskmanagers").path("taskmanagers")) {
            ids.add(tm.path("id").asText());
        }
        return ids;
    }

    /** Counts over all runs. */
    private static final class Summary {
        int runs;
        int failed;
        int faults;
        int local;
        long lost;
        long duplicated;
        long diverged;
        final Map<String, Integer> fallbacks = new HashMap<>();
        final List<String> failedSeeds = new ArrayList<>();

        void add(ChaosVerdict verdict) {
            runs++;
            faults += verdict.taskManagersLost;
            lost += verdict.audit.lost();
            duplicated += verdict.audit.duplicated();
            diverged += verdict.audit.diverged();
            if (verdict.local) {
                local++;
            } else {
                String reason =
                        verdict.fallbackReasons.stream()
                                .map(
                                        r ->
                                                Stream.concat(
                                                                ChaosVerdict.DOCUMENTED_FALLBACKS
                                                                        .stream(),
                                                                ChaosVerdict.DOCUMENTED_GAPS
                                                                        .stream())
                                                        .filter(r::contains)
                                                        .findFirst()
                                                        .orElse("other: " + r))
                                .findFirst()
                                .orElse("unknown");
                fallbacks.merge(reason, 1, Integer::sum);
            }
            if (!verdict.passed()) {
                failed++;
                failedSeeds.add(String.valueOf(verdict.plan.seed));
            }
        }

        void print(PrintStream out) {
            out.println(
                    "chaos summary: "
                            + runs
                            + " runs, "
                            + faults
                            + " TaskManagers killed, "
                            + local
                            + " recovered locally, "
                            + (runs - local)
                            + " global fallbacks "
                            + fallbacks);
            out.println(
                    "  records lost "
                            + lost
                            + ", duplicated "
                            + duplicated
                            + ", diverged "
                            + diverged);
            out.println(
                    "  "
                            + (failed == 0
                                    ? "every run passed"
                                    : failed + " runs failed, seeds " + failedSeeds));
        }
    }
}
