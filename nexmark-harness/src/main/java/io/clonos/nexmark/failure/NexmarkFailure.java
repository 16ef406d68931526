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

import io.clonos.runtime.configuration.ClonosOptions;
import io.clonos.runtime.minicluster.EmbeddedClusters;

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
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongUnaryOperator;

/**
 * {@code bin/clonos nexmark failure --query 3|8}: the paper's failure experiment (its Figure 6).
 * Nexmark Q3 or Q8 reads the rate-limited generator's events from Kafka and writes its results to
 * Kafka through Flink's transactional sink, with RocksDB incremental checkpoints to a configurable
 * URI; midway the TaskManager that runs the query's first subtask is terminated. The same
 * invocation does this on Clonos (local recovery, one standby per task) and on vanilla Flink 1.20.5
 * (restart of the whole job), each on a fresh embedded cluster and its own topics with the same
 * events, after a run of the query without a failure, the reference: each system's committed output
 * must equal it. It reports throughput and latency over time at the output topic and the recovery
 * times ({@link FailureFigures}).
 */
@Internal
public final class NexmarkFailure {

    /** How long a job may run on after its input was published, restarts included. */
    private static final Duration AFTER_INPUT_TIMEOUT = Duration.ofMinutes(5);

    /** The systems, in the order they run. */
    static final List<String> SYSTEMS = List.of("clonos", "flink");

    /** The knobs. */
    public static final class Settings {
        public int query = 3;
        public int rate = 10_000;
        public int seconds = 60;
        public int killAfterSeconds = 30;
        public int parallelism = 2;
        public long checkpointIntervalMs = 1_000;

        /**
         * The input topic's partitions per source subtask: with more than one, each reader
         * interleaves several partitions as its fetcher delivers them, which Clonos logs.
         */
        public int partitionsPerSubtask = 4;

        /** Q8's window. */
        public long windowSeconds = 10;

        /**
         * A file system URI for the checkpoints, each run in a directory of its own under it; null
         * for a temporary directory.
         */
        public String checkpointDir;

        /** An external broker; null for one in this JVM. */
        public String bootstrapServers;

        /** Clonos with one standby per task (the paper's setting). */
        public boolean standby = true;

        /**
         * Where the clusters run ({@link FailureClusters#named}): embedded in this JVM, or separate
         * processes (a TaskManager killed with SIGKILL).
         */
        public String processes = EmbeddedFailureClusters.NAME;

        /** Flink and Clonos settings for every cluster of the run ({@code -D key=value}). */
        public final Map<String, String> properties = new java.util.LinkedHashMap<>();

        public Path output = Path.of("bench-results", "nexmark-failure");

        long events() {
            return (long) rate * seconds;
        }

        int inputPartitions() {
            return parallelism * partitionsPerSubtask;
        }
    }

    /** One system's run: its figures and how its output compares with the reference. */
    public record Run(
            String system,
            FailureFigures figures,
            int restartedSubtasks,
            int subtasks,
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
    }

    private final Settings settings;
    private final PrintStream out;
    private final long started = System.nanoTime();
    private final FailureClusters clusters;

    public NexmarkFailure(Settings settings, PrintStream out) {
        this.settings = settings;
        this.out = out;
        this.clusters = FailureClusters.named(settings.processes);
    }

    /** Runs the experiment; returns the runs, also written to the output directory. */
    public List<Run> run() throws Exception {
        if (settings.killAfterSeconds >= settings.seconds) {
            throw new IllegalArgumentException(
                    "--kill-after ("
                            + settings.killAfterSeconds
                            + " s) must be less than --seconds ("
                            + settings.seconds
                            + ").");
        }
        if (settings.checkpointDir != null) {
            checkFileSystem(settings.checkpointDir);
        }
        out.printf(
                Locale.ROOT,
                "Nexmark failure experiment: Q%d, %,d events at %,d/s, parallelism %d, %d input partitions per subtask, checkpoint every %d ms, a TaskManager lost (%s, %s processes) after %d s, on %s%n",
                settings.query,
                settings.events(),
                settings.rate,
                settings.parallelism,
                settings.partitionsPerSubtask,
                settings.checkpointIntervalMs,
                clusters.failure(),
                clusters.name(),
                settings.killAfterSeconds,
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
                awaitBroker(admin, bootstrap);
                // first, so that it also warms this JVM up for the systems' runs
                List<String> reference =
                        reference(runId("reference"), admin, bootstrap, checkpointRoot);
                List<Run> runs = new ArrayList<>();
                for (String system : SYSTEMS) {
                    runs.add(
                            runSystem(system, runId(system), admin, bootstrap, checkpointRoot)
                                    .compareWith(reference));
                    Run last = runs.get(runs.size() - 1);
                    progress(
                            "%s: %d results, missing %d, duplicated %d against the failure-free run; %d of %d subtasks restarted; recovery %d ms",
                            system,
                            last.figures().results,
                            last.missing(),
                            last.duplicated(),
                            last.restartedSubtasks(),
                            last.subtasks(),
                            last.recoveryMs());
                }
                FailureReport.write(settings, runs, out);
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

    /** What a system's run leaves before it is compared with the reference. */
    private record SystemRun(
            String system,
            List<FailureFigures.Output> outputs,
            FailureFigures figures,
            int restarted,
            int subtasks) {
        Run compareWith(List<String> reference) {
            Map<String, Long> balance = new HashMap<>();
            reference.forEach(value -> balance.merge(value, 1L, Long::sum));
            outputs.forEach(o -> balance.merge(o.value(), -1L, Long::sum));
            long missing =
                    balance.values().stream().filter(n -> n > 0).mapToLong(Long::longValue).sum();
            long duplicated =
                    -balance.values().stream().filter(n -> n < 0).mapToLong(Long::longValue).sum();
            return new Run(system, figures, restarted, subtasks, missing, duplicated);
        }
    }

    private SystemRun runSystem(
            String system, String id, Admin admin, String bootstrap, String checkpointRoot)
            throws Exception {
        boolean onClonos = system.equals("clonos");
        String input = id + "-in";
        String output = id + "-out";
        createTopics(admin, input, output);
        Map<Integer, Long> inputEnd =
                EventPublisher.endOffsets(settings.events(), settings.inputPartitions());
        Configuration config = clusterConfiguration(checkpointRoot + "/" + id);
        config.set(ClonosOptions.STANDBY_ENABLED, onClonos && settings.standby);
        // one slot per TaskManager, so that the lost TaskManager runs one subtask of each task
        // (slot
        // sharing) and nothing else; one TaskManager per standby and one spare, for both systems
        try (FailureClusters.Cluster cluster =
                        clusters.start(
                                onClonos,
                                config,
                                2 * settings.parallelism + 1,
                                1,
                                settings.output.resolve(id));
                EventPublisher publisher = publisher(bootstrap, input, true)) {
            JobID job =
                    cluster.submit(
                            FailureJob.build(
                                    settings.query,
                                    new FailureJob.Topics(
                                            bootstrap,
                                            input,
                                            inputEnd,
                                            output,
                                            id,
                                            DeliveryGuarantee.EXACTLY_ONCE),
                                    settings.parallelism,
                                    settings.checkpointIntervalMs,
                                    settings.windowSeconds),
                            FailureJob.USER_CLASSES);
            awaitRunning(cluster, job);
            publisher.start();
            progress("%s: job running, publishing", system);
            long killedAt = runToEnd(system, cluster, job, publisher, admin, output);
            publisher.await();
            if (cluster.status(job) != JobStatus.FINISHED) {
                throw new IllegalStateException(
                        "Q"
                                + settings.query
                                + " on "
                                + system
                                + " ended "
                                + cluster.status(job)
                                + cluster.cause(job));
            }
            if (killedAt < 0) {
                throw new IllegalStateException(
                        "Q"
                                + settings.query
                                + " on "
                                + system
                                + " ended before the TaskManager was to be terminated; give it more --seconds.");
            }
            int restarted = cluster.restartedSubtasks(job);
            int subtasks = cluster.subtasks(job);
            List<FailureFigures.Output> outputs = committed(bootstrap, output, publisher::dueAt);
            admin.deleteTopics(List.of(input, output));
            // the level before the failure: its last two thirds (the first is warm-up), which hold
            // several of Q8's windows
            long baselineMs = TimeUnit.SECONDS.toMillis(settings.killAfterSeconds) * 2 / 3;
            return new SystemRun(
                    system,
                    outputs,
                    new FailureFigures(system, outputs, killedAt, baselineMs),
                    restarted,
                    subtasks);
        }
    }

    /**
     * Waits for the job to end, terminating the TaskManager that runs the query's first subtask
     * {@code --kill-after} seconds after publishing began and printing progress every two seconds;
     * returns when the TaskManager was terminated, -1 if the job ended before.
     */
    private long runToEnd(
            String system,
            FailureClusters.Cluster cluster,
            JobID job,
            EventPublisher publisher,
            Admin admin,
            String output)
            throws Exception {
        long killAt =
                publisher.startMillis() + TimeUnit.SECONDS.toMillis(settings.killAfterSeconds);
        long killedAt = -1;
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
                        "Q"
                                + settings.query
                                + " on "
                                + system
                                + " did not end within "
                                + AFTER_INPUT_TIMEOUT.toMinutes()
                                + " minutes after its input"
                                + cluster.cause(job));
            }
            if (killedAt < 0 && now >= killAt) {
                killedAt = System.currentTimeMillis();
                String victim = cluster.loseTaskManagerOf(job, queryOperator(), 0);
                progress(
                        "%s: TaskManager %s, which ran %s[0], lost (%s)",
                        system, victim, queryOperator(), clusters.failure());
            }
            if (now - lastReport >= 2_000) {
                long written = latestOffsets(admin, output);
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
        return killedAt;
    }

    /**
     * The failure-free output: the query without a failure or a rate limit, on vanilla Flink, over
     * the same events every run publishes, its sink without transactions: nothing fails.
     */
    private List<String> reference(String id, Admin admin, String bootstrap, String checkpointRoot)
            throws Exception {
        String input = id + "-in";
        String output = id + "-out";
        createTopics(admin, input, output);
        try (EventPublisher publisher = publisher(bootstrap, input, false)) {
            publisher.start();
            publisher.await();
        }
        progress("reference: the failure-free run");
        try (FailureClusters.Cluster cluster =
                new EmbeddedFailureClusters()
                        .start(
                                false,
                                clusterConfiguration(checkpointRoot + "/" + id),
                                1,
                                settings.parallelism,
                                settings.output.resolve(id))) {
            JobID job =
                    cluster.submit(
                            FailureJob.build(
                                    settings.query,
                                    new FailureJob.Topics(
                                            bootstrap,
                                            input,
                                            EventPublisher.endOffsets(
                                                    settings.events(), settings.inputPartitions()),
                                            output,
                                            id,
                                            DeliveryGuarantee.AT_LEAST_ONCE),
                                    settings.parallelism,
                                    settings.checkpointIntervalMs,
                                    settings.windowSeconds),
                            List.of());
            while (!cluster.status(job).isGloballyTerminalState()) {
                Thread.sleep(100);
            }
            if (cluster.status(job) != JobStatus.FINISHED) {
                throw new IllegalStateException(
                        "The failure-free run of Q"
                                + settings.query
                                + " failed"
                                + cluster.cause(job));
            }
        }
        List<String> values =
                committed(bootstrap, output, t -> t).stream()
                        .map(FailureFigures.Output::value)
                        .toList();
        admin.deleteTopics(List.of(input, output));
        progress("reference: %d results", values.size());
        return values;
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

    /** Fails with a clear message when no broker answers at {@code bootstrap}. */
    private static void awaitBroker(Admin admin, String bootstrap) throws Exception {
        try {
            admin.describeCluster().nodes().get(30, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException(
                    "No Kafka broker answered at "
                            + bootstrap
                            + " within 30 s (--bootstrap-servers).",
                    e);
        }
    }

    private String runId(String run) {
        return "nexmark-q"
                + settings.query
                + "-"
                + run
                + "-"
                + UUID.randomUUID().toString().substring(0, 8);
    }

    private String queryOperator() {
        return "q" + settings.query + "-join";
    }

    private Configuration clusterConfiguration(String checkpointDir) {
        Configuration config = EmbeddedClusters.killConfiguration();
        config.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        config.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        config.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpointDir);
        config.addAll(Configuration.fromMap(settings.properties));
        return config;
    }

    /** The run's events, as text lines, to {@code input}; at the generator's pace if paced. */
    private EventPublisher publisher(String bootstrap, String input, boolean paced) {
        return new EventPublisher(
                bootstrap,
                input,
                settings.inputPartitions(),
                settings.events(),
                settings.rate,
                paced,
                EventPublisher.Encoding.LINES);
    }

    /**
     * The input topic, {@code partitionsPerSubtask} partitions per source subtask, and the output
     * topic, one partition per sink subtask, stamped with the time records reach the broker.
     * Neither expires records by time: the events' times lie in the generator's past (its base
     * time), which time-based retention would delete at once.
     */
    private void createTopics(Admin admin, String input, String output) throws Exception {
        admin.createTopics(
                        List.of(
                                new NewTopic(input, settings.inputPartitions(), (short) 1)
                                        .configs(Map.of("retention.ms", "-1")),
                                new NewTopic(output, settings.parallelism, (short) 1)
                                        .configs(
                                                Map.of(
                                                        "retention.ms",
                                                        "-1",
                                                        "message.timestamp.type",
                                                        "LogAppendTime"))))
                .all()
                .get();
    }

    private static void awaitRunning(FailureClusters.Cluster cluster, JobID job) throws Exception {
        while (!cluster.running(job)) {
            Thread.sleep(50);
        }
    }

    /** The partitions of an output topic of the run's: one per subtask ({@link #createTopics}). */
    private List<TopicPartition> partitions(String topic) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (int p = 0; p < settings.parallelism; p++) {
            partitions.add(new TopicPartition(topic, p));
        }
        return partitions;
    }

    private long latestOffsets(Admin admin, String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        partitions(topic).forEach(partition -> latest.put(partition, OffsetSpec.latest()));
        return admin.listOffsets(latest).all().get().values().stream()
                .mapToLong(info -> info.offset())
                .sum();
    }

    /**
     * Every committed record of {@code topic}, as a consumer that reads committed records sees it,
     * with when it reached the broker and when its input was due ({@code dueAt} of its event time).
     */
    private List<FailureFigures.Output> committed(
            String bootstrap, String topic, LongUnaryOperator dueAt) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        List<FailureFigures.Output> outputs = new ArrayList<>();
        try (KafkaConsumer<byte[], String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = partitions(topic);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                for (ConsumerRecord<byte[], String> record :
                        consumer.poll(Duration.ofMillis(200))) {
                    Header eventTime = record.headers().lastHeader(FailureJob.EVENT_TIME_HEADER);
                    outputs.add(
                            new FailureFigures.Output(
                                    record.timestamp(),
                                    dueAt.applyAsLong(ByteBuffer.wrap(eventTime.value()).getLong()),
                                    record.value()));
                }
            }
        }
        return outputs;
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
