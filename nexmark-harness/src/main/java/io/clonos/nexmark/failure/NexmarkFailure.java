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

import io.clonos.bench.report.RecoveryBreakdown;
import io.clonos.runtime.configuration.ClonosOptions;
import io.clonos.runtime.minicluster.EmbeddedClusters;
import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.util.FileUtils;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * {@code bin/clonos nexmark failure --query 3|8|synthetic}: the paper's failure experiment (its
 * Figure 6 and its synthetic job). The job reads the rate-limited generator's events from Kafka and
 * writes its results to Kafka through Flink's transactional sink, with RocksDB incremental
 * checkpoints to a configurable URI; midway the TaskManager that runs the job's first subtask is
 * lost, or three are, at once or staggered ({@link ScheduledLosses}). The same invocation does this
 * on Clonos (local recovery, one standby per task) and on vanilla Flink 1.20.5 (restart of the
 * whole job), each on a fresh embedded cluster and its own topics with the same events, after a run
 * of the query without a failure, the reference: each system's committed output must equal it. It
 * reports throughput and latency over time at the output topic and the recovery times ({@link
 * FailureFigures}).
 *
 * <p>With {@code --load} the input rate is a fraction of the capacity a first, unthrottled run of
 * the query on Clonos measures; with {@code --repetitions} both systems run that many times, the
 * order alternating, and the summary holds each system's medians.
 */
@Internal
public final class NexmarkFailure {

    /** How long a job may run on after its input was published, restarts included. */
    private static final Duration AFTER_INPUT_TIMEOUT = Duration.ofMinutes(5);

    /** The systems, in the order they run. */
    static final List<String> SYSTEMS = List.of("clonos", "flink");

    /** The subtask of the query whose TaskManager is lost; its results go to this partition. */
    private static final int LOST_SUBTASK = 0;

    /**
     * One system's run: its figures and recovery's breakdown, how its output compares with the
     * reference (-1 before it was compared), when the JobManager recorded the failure ({@code
     * detectionMs} after it, -1 if it recorded none), when the lost subtask's first result after it
     * came out ({@code firstOutputMs} after it, -1 if none did) and the job's state at the last
     * checkpoint before it.
     */
    public record Run(
            String system,
            int repetition,
            FailureFigures figures,
            RecoveryBreakdown breakdown,
            int restartedSubtasks,
            int subtasks,
            long detectionMs,
            long firstOutputMs,
            long stateBytes,
            long missing,
            long duplicated) {
        public boolean exactlyOnce() {
            return missing == 0 && duplicated == 0;
        }

        public boolean local() {
            return restartedSubtasks < subtasks;
        }

        public long recoveryMs() {
            return figures.recoveryMs;
        }

        /** The system and the repetition, as the report names the run. */
        public String label() {
            return system + "-" + repetition;
        }

        Run compared(long missing, long duplicated) {
            return new Run(
                    system,
                    repetition,
                    figures,
                    breakdown,
                    restartedSubtasks,
                    subtasks,
                    detectionMs,
                    firstOutputMs,
                    stateBytes,
                    missing,
                    duplicated);
        }
    }

    private final FailureSettings settings;
    private final PrintStream out;
    private final long started = System.nanoTime();
    private final FailureClusters clusters;

    /** The experiment on embedded clusters or on one of {@code provided} ({@code --processes}). */
    public NexmarkFailure(
            FailureSettings settings, PrintStream out, List<FailureClusters> provided) {
        this.settings = settings;
        this.out = out;
        this.clusters = FailureClusters.named(settings.processes, provided);
    }

    /** Runs the experiment; returns the runs, also written to the output directory. */
    public List<Run> run() throws Exception {
        long lastLossMs =
                TimeUnit.SECONDS.toMillis(settings.killAfterSeconds)
                        + settings.failures.offsetMs(settings.failures.kills - 1);
        if (lastLossMs >= TimeUnit.SECONDS.toMillis(settings.seconds)) {
            throw new IllegalArgumentException(
                    "--kill-after ("
                            + settings.killAfterSeconds
                            + " s) and the spacing of --failures "
                            + settings.failures.label()
                            + " put the last loss at "
                            + lastLossMs / 1000
                            + " s, which must be before the end of --seconds ("
                            + settings.seconds
                            + ").");
        }
        settings.failures.requireSurvivorAt(settings.parallelism, settings.query.lostOperator());
        if (settings.checkpointDir != null) {
            checkFileSystem(settings.checkpointDir);
        }
        out.printf(
                Locale.ROOT,
                "Nexmark failure experiment: %s, %s for %d s, parallelism %d, %d input partitions per subtask, checkpoint every %d ms, %d TaskManager(s) lost (%s, %s, %s processes) from %d s, %d repetition(s) of %s%n",
                settings.query.title(),
                settings.load > 0
                        ? String.format(
                                Locale.ROOT, "events at %.2f of the capacity", settings.load)
                        : String.format(Locale.ROOT, "%,d events/s", settings.rate),
                settings.seconds,
                settings.parallelism,
                settings.partitionsPerSubtask,
                settings.checkpointIntervalMs,
                settings.failures.kills,
                settings.failures.label(),
                clusters.failure(),
                clusters.name(),
                settings.killAfterSeconds,
                settings.repetitions,
                SYSTEMS);
        KafkaBroker broker =
                settings.bootstrapServers == null
                        ? KafkaBroker.beside(clusters, settings.output)
                        : null;
        Path checkpoints =
                settings.checkpointDir == null
                        ? Files.createTempDirectory("clonos-nexmark-checkpoints")
                        : null;
        try {
            String bootstrap =
                    broker == null ? settings.bootstrapServers : broker.bootstrapServers();
            String checkpointRoot =
                    checkpoints == null ? settings.checkpointDir : checkpoints.toUri().toString();
            progress(
                    "Kafka at %s%s, checkpoints under %s",
                    bootstrap, broker == null ? "" : " (" + broker.where() + ")", checkpointRoot);
            try (Admin admin =
                    Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
                FailureTopics topics =
                        new FailureTopics(
                                admin, bootstrap, settings.inputPartitions(), settings.parallelism);
                topics.awaitBroker();
                // events per second the capacity run measured, -1 without --load
                long capacity = -1;
                if (settings.load > 0) {
                    capacity = measureCapacity(topics, checkpointRoot);
                    settings.rate = (int) Math.max(1, Math.round(capacity * settings.load));
                    progress(
                            "capacity %,d events/s; at load %.2f the input comes at %,d events/s",
                            capacity, settings.load, settings.rate);
                }
                // before the systems' runs, so that it also warms this JVM up for them
                List<String> reference = reference(runId("reference"), topics, checkpointRoot);
                List<Run> runs = new ArrayList<>();
                for (int repetition = 0; repetition < settings.repetitions; repetition++) {
                    for (String system : order(repetition)) {
                        Run last =
                                runSystem(system, repetition, topics, checkpointRoot)
                                        .compareWith(reference);
                        runs.add(last);
                        progress(
                                "%s: %d results, missing %d, duplicated %d against the failure-free run; %d of %d subtasks restarted; detection %d ms, recovery %d ms",
                                last.label(),
                                last.figures().results,
                                last.missing(),
                                last.duplicated(),
                                last.restartedSubtasks(),
                                last.subtasks(),
                                last.detectionMs(),
                                last.recoveryMs());
                    }
                }
                FailureReport.write(settings, clusters.failure(), capacity, runs, out);
                return runs;
            }
        } finally {
            if (broker != null) {
                broker.close();
            }
            if (checkpoints != null) {
                FileUtils.deleteDirectoryQuietly(checkpoints.toFile());
            }
        }
    }

    /** The systems in the order they run in {@code repetition}: alternating. */
    static List<String> order(int repetition) {
        List<String> order = new ArrayList<>(SYSTEMS);
        if (repetition % 2 == 1) {
            Collections.reverse(order);
        }
        return order;
    }

    /** A system's run with its output, before it is compared with the reference. */
    private record SystemRun(Run run, List<FailureFigures.Output> outputs) {
        Run compareWith(List<String> reference) {
            Map<String, Long> balance = new HashMap<>();
            reference.forEach(value -> balance.merge(value, 1L, Long::sum));
            outputs.forEach(o -> balance.merge(o.value(), -1L, Long::sum));
            long missing =
                    balance.values().stream().filter(n -> n > 0).mapToLong(Long::longValue).sum();
            long duplicated =
                    -balance.values().stream().filter(n -> n < 0).mapToLong(Long::longValue).sum();
            return run.compared(missing, duplicated);
        }
    }

    private SystemRun runSystem(
            String system, int repetition, FailureTopics topics, String checkpointRoot)
            throws Exception {
        boolean onClonos = system.equals("clonos");
        String id = runId(system + "-" + repetition);
        String input = id + "-in";
        String output = id + "-out";
        topics.create(input, output);
        Configuration config = clusterConfiguration(checkpointRoot + "/" + id);
        config.set(ClonosOptions.STANDBY_ENABLED, onClonos && settings.standby);
        try (FailureClusters.Cluster cluster = startCluster(onClonos, config, id);
                EventPublisher publisher =
                        publisher(topics.bootstrap(), input, settings.events(), true)) {
            JobID job =
                    submit(cluster, topics, id, settings.events(), DeliveryGuarantee.EXACTLY_ONCE);
            awaitRunning(cluster, job);
            publisher.start();
            progress("%s: job running, publishing", system);
            long[] killed;
            try (ProgressSampler sampler = ProgressSampler.of(settings, cluster.rest(), job)) {
                killed = runToEnd(system, cluster, job, publisher, topics, output);
                publisher.await();
                ProgressSampler.write(
                        sampler, settings, system + "-" + repetition, killed[0], publisher);
            }
            long killedAt = killed[0];
            if (cluster.status(job) != JobStatus.FINISHED) {
                throw new IllegalStateException(
                        settings.query.title()
                                + " on "
                                + system
                                + " ended "
                                + cluster.status(job)
                                + cluster.cause(job));
            }
            if (killedAt < 0) {
                throw new IllegalStateException(
                        settings.query.title()
                                + " on "
                                + system
                                + " ended before every TaskManager was lost; give it more --seconds.");
            }
            int restarted = cluster.restartedSubtasks(job);
            int subtasks = cluster.subtasks(job);
            ClusterRestClient rest = cluster.rest();
            long detectedAt = rest.firstExceptionAt(job.toHexString(), "").orElse(-1);
            List<FailureFigures.Output> outputs = topics.committed(output, publisher::dueAt);
            topics.delete(input, output);
            String label = system + "-" + repetition;
            FailureReport.writeOutputs(settings, label, killedAt, outputs);
            FailureFigures figures =
                    new FailureFigures(label, outputs, killedAt, settings.baselineMs());
            long firstOutputAt = FailureFigures.firstOutputAfter(outputs, killedAt, LOST_SUBTASK);
            RecoveryBreakdown breakdown =
                    RecoveryBreakdown.of(
                            rest.replacementStates(job.toHexString()),
                            killedAt,
                            detectedAt,
                            firstOutputAt,
                            killedAt + figures.robustRecoveryMs);
            Run run =
                    new Run(
                            system,
                            repetition,
                            figures,
                            breakdown,
                            restarted,
                            subtasks,
                            detectedAt < 0 ? -1 : detectedAt - killedAt,
                            firstOutputAt < 0 ? -1 : firstOutputAt - killedAt,
                            killed[1],
                            -1,
                            -1);
            return new SystemRun(run, outputs);
        }
    }

    /**
     * Waits for the job to end, losing the TaskManagers of {@code --failures} from {@code
     * --kill-after} seconds after publishing began and printing progress every two seconds; returns
     * when the first TaskManager was lost (-1 if the job ended before every loss) and the job's
     * state at the last checkpoint before (bytes, -1 if none had completed).
     */
    private long[] runToEnd(
            String system,
            FailureClusters.Cluster cluster,
            JobID job,
            EventPublisher publisher,
            FailureTopics topics,
            String output)
            throws Exception {
        ScheduledLosses losses =
                new ScheduledLosses(
                        settings.failures,
                        settings.query.lostOperator(),
                        publisher.startMillis()
                                + TimeUnit.SECONDS.toMillis(settings.killAfterSeconds));
        long stateBytes = -1;
        long lastOutput = 0;
        long lastReport = System.currentTimeMillis();
        long lastPublished = 0;
        long deadline =
                publisher.startMillis()
                        + TimeUnit.SECONDS.toMillis(settings.seconds)
                        + AFTER_INPUT_TIMEOUT.toMillis();
        while (!cluster.status(job).isGloballyTerminalState()) {
            Thread.sleep(100);
            long now = System.currentTimeMillis();
            if (now > deadline) {
                throw new IllegalStateException(
                        settings.query.title()
                                + " on "
                                + system
                                + " did not end within "
                                + AFTER_INPUT_TIMEOUT.toMinutes()
                                + " minutes after its input"
                                + cluster.cause(job));
            }
            if (losses.firstDue(now)) {
                stateBytes = cluster.rest().checkpointedStateBytes(job.toHexString());
            }
            List<String> lost = losses.loseDue(cluster, job, now);
            if (!lost.isEmpty()) {
                progress(
                        "%s: TaskManagers %s, which ran subtasks of %s, lost (%s)",
                        system, lost, settings.query.lostOperator(), clusters.failure());
            }
            if (now - lastReport >= 2_000) {
                long written = topics.written(output);
                long published = publisher.published();
                progress(
                        "%s: %,d events published (%,.0f/s), output %,.0f records/s",
                        system,
                        published,
                        (published - lastPublished) * 1000.0 / (now - lastReport),
                        (written - lastOutput) * 1000.0 / (now - lastReport));
                lastOutput = written;
                lastPublished = published;
                lastReport = now;
            }
        }
        return new long[] {losses.done() ? losses.firstLostAt() : -1, stateBytes};
    }

    /**
     * The failure-free output: the query without a failure or a rate limit, on vanilla Flink, over
     * the same events every run publishes, its sink without transactions: nothing fails.
     */
    private List<String> reference(String id, FailureTopics topics, String checkpointRoot)
            throws Exception {
        progress("reference: the failure-free run");
        try (FailureClusters.Cluster cluster =
                new EmbeddedFailureClusters()
                        .start(
                                false,
                                clusterConfiguration(checkpointRoot + "/" + id),
                                1,
                                settings.parallelism,
                                settings.output.resolve(id))) {
            runUnthrottled(id, cluster, topics, settings.events(), DeliveryGuarantee.AT_LEAST_ONCE);
        }
        List<String> values =
                topics.committed(id + "-out", t -> t).stream()
                        .map(FailureFigures.Output::value)
                        .toList();
        topics.delete(id + "-in", id + "-out");
        progress("reference: %d results", values.size());
        return values;
    }

    /**
     * Events per second the query sustains unthrottled on Clonos (the system under test, whose
     * causal logging costs more than Flink's run), on a cluster like the runs': from all its
     * subtasks running until it finished, over {@code capacityEvents} events published before. The
     * job's end counts in, so the figure errs low, and the load with it.
     */
    private long measureCapacity(FailureTopics topics, String checkpointRoot) throws Exception {
        String id = runId("capacity");
        progress("capacity: %,d events unthrottled on clonos", settings.capacityEvents);
        Configuration config = clusterConfiguration(checkpointRoot + "/" + id);
        config.set(ClonosOptions.STANDBY_ENABLED, settings.standby);
        long ms;
        try (FailureClusters.Cluster cluster = startCluster(true, config, id)) {
            ms =
                    runUnthrottled(
                            id,
                            cluster,
                            topics,
                            settings.capacityEvents,
                            DeliveryGuarantee.EXACTLY_ONCE);
        }
        topics.delete(id + "-in", id + "-out");
        return Math.max(1, settings.capacityEvents * 1000 / Math.max(1, ms));
    }

    /**
     * Publishes {@code events} to the run's input topic, then runs the query over them to its end;
     * returns the milliseconds from all its subtasks running until it finished.
     */
    private long runUnthrottled(
            String id,
            FailureClusters.Cluster cluster,
            FailureTopics topics,
            long events,
            DeliveryGuarantee guarantee)
            throws Exception {
        String input = id + "-in";
        topics.create(input, id + "-out");
        try (EventPublisher publisher = publisher(topics.bootstrap(), input, events, false)) {
            publisher.start();
            publisher.await();
        }
        JobID job = submit(cluster, topics, id, events, guarantee);
        awaitRunning(cluster, job);
        long running = System.currentTimeMillis();
        while (!cluster.status(job).isGloballyTerminalState()) {
            Thread.sleep(50);
        }
        long ms = System.currentTimeMillis() - running;
        if (cluster.status(job) != JobStatus.FINISHED) {
            throw new IllegalStateException(
                    "The unthrottled run "
                            + id
                            + " of "
                            + settings.query.title()
                            + " failed"
                            + cluster.cause(job));
        }
        return ms;
    }

    /**
     * Submits the query over run {@code id}'s input topic, which ends after {@code events} events,
     * to its output topic.
     */
    private JobID submit(
            FailureClusters.Cluster cluster,
            FailureTopics topics,
            String id,
            long events,
            DeliveryGuarantee guarantee)
            throws Exception {
        return cluster.submit(
                FailureJob.build(
                        settings,
                        new FailureJob.Topics(
                                topics.bootstrap(),
                                id + "-in",
                                EventPublisher.endOffsets(events, settings.inputPartitions()),
                                id + "-out",
                                id,
                                guarantee)),
                FailureJob.USER_CLASSES);
    }

    /**
     * One slot per TaskManager, so that the lost TaskManager runs one subtask of each task (slot
     * sharing) and nothing else; one TaskManager per standby and one spare, for both systems.
     */
    private FailureClusters.Cluster startCluster(boolean onClonos, Configuration config, String id)
            throws Exception {
        return clusters.start(
                onClonos, config, 2 * settings.parallelism + 1, 1, settings.output.resolve(id));
    }

    /** Fails fast, naming the option, when Flink has no file system for the checkpoints' URI. */
    private static void checkFileSystem(String uri) {
        try {
            new org.apache.flink.core.fs.Path(uri).getFileSystem();
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "--checkpoint-dir "
                            + uri
                            + " is not a file system Flink can write checkpoints to: "
                            + e.getMessage(),
                    e);
        }
    }

    private String runId(String run) {
        return "nexmark-"
                + settings.query.id()
                + "-"
                + run
                + "-"
                + UUID.randomUUID().toString().substring(0, 8);
    }

    private Configuration clusterConfiguration(String checkpointDir) {
        Configuration config = EmbeddedClusters.killConfiguration();
        config.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        config.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        config.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpointDir);
        ProgressSampler.configure(settings, config);
        config.addAll(Configuration.fromMap(settings.properties));
        return config;
    }

    /** {@code events} events, as text lines, to {@code input}; at the generator's pace if paced. */
    private EventPublisher publisher(String bootstrap, String input, long events, boolean paced) {
        return new EventPublisher(
                bootstrap,
                input,
                settings.inputPartitions(),
                events,
                settings.rate,
                paced,
                EventPublisher.Encoding.LINES,
                settings.eventSizes);
    }

    private static void awaitRunning(FailureClusters.Cluster cluster, JobID job) throws Exception {
        while (!cluster.running(job)) {
            Thread.sleep(50);
        }
    }

    private void progress(String format, Object... args) {
        out.printf(
                Locale.ROOT,
                "[%4ds] " + format + "%n",
                prepend((System.nanoTime() - started) / 1_000_000_000L, args));
    }

    private static Object[] prepend(Object first, Object[] rest) {
        Object[] all = new Object[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }
}
