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

package io.clonos.streaming.recovery;

import io.clonos.examples.CommittedLinesSink;
import io.clonos.examples.HashChainJob;
import io.clonos.examples.HashChains;
import io.clonos.examples.InterleavingSplitsSource;
import io.clonos.examples.LegacyNumbersSource;
import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.minicluster.EmbeddedTaskManagers;
import io.clonos.runtime.protocol.FailTaskRequest;
import io.clonos.runtime.protocol.SchedulerEndpoint;
import io.clonos.runtime.rest.ClusterRestClient;
import io.clonos.runtime.standby.StandbyVertices;
import io.clonos.streaming.causal.CausalServices;
import io.clonos.streaming.standby.StandbyPlacement;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.datastream.AsyncDataStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.async.AsyncRetryStrategy;
import org.apache.flink.streaming.api.functions.async.ResultFuture;
import org.apache.flink.streaming.api.functions.async.RichAsyncFunction;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.retryable.AsyncRetryStrategies;
import org.apache.flink.streaming.util.retryable.RetryPredicates;
import org.apache.flink.util.Collector;
import org.apache.flink.util.SerializedValue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.annotation.Nullable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exactly-once local recovery of a deliberately nondeterministic job on a real embedded cluster.
 *
 * <p>Two sources feed one keyed operator through four channels, so the order in which it reads them
 * differs on every run; per record it also reads Flink's processing time, the causal time service
 * and the causal random service, and it fires processing-time timers of all keys at the same
 * instants; in the one-stage job, processing-time windows chained to it summarize each key's links.
 * Every effect (a record, a timer or a window) extends its key's hash chain: sequence number,
 * previous digest, new digest, where the digest covers the input, the time and the random number. A
 * recovered task that did not reproduce its predecessor exactly emits links that break the chain at
 * the sink; one that lost or repeated work emits gaps or repeated sequence numbers.
 */
class ExactlyOnceITCase {

    private static final long NUMBERS = 8_000;
    private static final int KEYS = 8;
    private static final int PARALLELISM = 2;

    /**
     * The first keyed stage of the one-stage job: the hash chain and its processing-time windows.
     */
    private static final String FIRST_STAGE = "chain -> window";

    /**
     * Where the sink commits the links it received (key, sequence, previous digest, digest, input).
     */
    private static volatile String output;

    @TempDir Path work;

    private static final AtomicBoolean FAILED = new AtomicBoolean();

    /** The subtasks of {@link #failingToo} that failed. */
    private static final Set<Integer> FAILED_TOO =
            java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** Which operator fails too, right after the first failure; null: none. */
    private static volatile String failingToo;

    /** Whether every subtask of {@link #failingToo} fails, not only subtask 0. */
    private static volatile boolean everySubtaskFailsToo;

    /** Which operator's subtask 0 fails in its first attempt, and after how many records. */
    private static volatile String failing;

    private static volatile long failAfter;

    /** Counted down when the first attempt of an {@link EndGate} read the end of its input. */
    private static volatile CountDownLatch inputEnded = new CountDownLatch(1);

    /** Releases the checkpoints an {@link EndGate} holds. */
    private static volatile CountDownLatch released = new CountDownLatch(1);

    private ClonosMiniCluster cluster;

    @BeforeEach
    void reset() {
        output = work.resolve("links-" + System.nanoTime()).toString();
        FAILED.set(false);
        IDLE_PHASE_OVER.set(false);
        FAILED_TOO.clear();
        failingToo = null;
        everySubtaskFailsToo = false;
        inputEnded = new CountDownLatch(1);
        released = new CountDownLatch(1);
    }

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private void startCluster(Configuration config) throws Exception {
        // a recovery that gets stuck falls back (and the test fails) long before the job timeout
        if (!config.containsKey("clonos.recovery.reconnect-timeout")) {
            config.setString("clonos.recovery.reconnect-timeout", "10 s");
        }
        cluster = RecoveryClusters.start(config, 3, 2, 5);
    }

    @Test
    void failedMiddleTaskIsRecoveredExactlyOnce() throws Exception {
        startCluster(new Configuration());
        failing = "chain";
        failAfter = NUMBERS / PARALLELISM / 2;
        AccessExecutionGraph graph = run();

        assertThat(FAILED).as("the injected failure happened").isTrue();
        assertThat(Attempts.restarted(graph))
                .as(() -> Attempts.why(graph))
                .isEqualTo(Set.of(FIRST_STAGE + "[0]"));
        assertThat(violations()).as("broken, lossy or repeated hash chains").isEmpty();
    }

    @Test
    void failedSourceTaskIsRecoveredExactlyOnce() throws Exception {
        startCluster(new Configuration());
        failing = "left-tag";
        failAfter = NUMBERS / PARALLELISM / 2;
        AccessExecutionGraph graph = run();

        assertThat(FAILED).as("the injected failure happened").isTrue();
        assertThat(Attempts.restarted(graph))
                .as(() -> Attempts.why(graph))
                .isEqualTo(Set.of("Source: left -> left-tag[0]"));
        assertThat(violations()).as("broken, lossy or repeated hash chains").isEmpty();
    }

    /** Two connected tasks fail together; the sink holds the first one's log at distance 2. */
    @Test
    void consecutiveFailuresAreRecoveredExactlyOnceWithDsd2() throws Exception {
        consecutiveFailures("2", Set.of("chain -> rekey[0]", "chain2[0]"));
    }

    @Test
    void consecutiveFailuresAreRecoveredExactlyOnceWithFullDsd() throws Exception {
        consecutiveFailures("-1", Set.of("chain -> rekey[0]", "chain2[0]"));
    }

    /**
     * With DSD 1 only the failed task's consumers hold its determinants; when all of them fail too,
     * the determinants are lost: a global rollback, still exactly once.
     */
    @Test
    void consecutiveFailuresBeyondTheDsdFallBackAndStayExactlyOnce() throws Exception {
        Set<String> all = new HashSet<>();
        for (String operator :
                new String[] {
                    "Source: left -> left-tag",
                    "Source: right -> right-tag",
                    "chain -> rekey",
                    "chain2",
                    "Sink: sink"
                }) {
            for (int i = 0; i < (operator.startsWith("Sink") ? 1 : PARALLELISM); i++) {
                all.add(operator + "[" + i + "]");
            }
        }
        everySubtaskFailsToo = true;
        consecutiveFailures("1", all);
    }

    /**
     * The same lost determinants with {@code clonos.recovery.orphan-fallback: at-least-once}: the
     * failed tasks restart alone without them, the rest of the job keeps running, and every input
     * still takes effect (some twice).
     */
    @Test
    void lostDeterminantsWithAtLeastOnceFallbackRestartOnlyTheFailedTasks() throws Exception {
        everySubtaskFailsToo = true;
        startCluster(
                Configuration.fromMap(
                        Map.of(
                                "clonos.determinant-sharing-depth",
                                "1",
                                "clonos.determinant-sharing-hops",
                                "every-task",
                                "clonos.recovery.orphan-fallback",
                                "at-least-once")));
        failing = "chain";
        failingToo = "chain2";
        failAfter = NUMBERS / PARALLELISM / 2;
        AccessExecutionGraph graph = run(true);

        assertThat(FAILED_TOO).hasSize(PARALLELISM);
        // the sink may restart too: when it finds a derailed producer's output diverging it fails
        // that producer, and may lose the race with the release of its partition
        assertThat(Attempts.restarted(graph))
                .as(() -> "no global rollback" + "; " + Attempts.why(graph))
                .contains("chain -> rekey[0]", "chain2[0]", "chain2[1]")
                .isSubsetOf("chain -> rekey[0]", "chain2[0]", "chain2[1]", "Sink: sink[0]");
        assertThat(HashChains.lostInputs(committedLinks(), new String[] {"left", "right"}, NUMBERS))
                .as("inputs lost")
                .isEmpty();
    }

    /**
     * A producer that restarts without determinants (here: causal logging off, at least once by
     * choice) after its consumer read the end of all its input. Flink has finished the consumer's
     * operators then and drops whatever records still come, so the consumer must not take the new
     * stream: it restarts too (a rollback, with the default orphan fallback), and every input takes
     * effect.
     */
    @Test
    void aConsumerThatEndedItsInputDoesNotTakeAFreshStream() throws Exception {
        startCluster(Configuration.fromMap(Map.of("clonos.determinant-sharing-depth", "0")));
        failing = null;
        StreamExecutionEnvironment env = environment();
        source(env, "left")
                .union(source(env, "right"))
                .keyBy(t -> t.f0)
                .process(new HashChain("chain"))
                .name("chain")
                .transform("end-gate", Types.STRING, new EndGate())
                .setParallelism(1)
                .addSink(new CommittedLinesSink(output))
                .name("sink")
                .setParallelism(1);
        JobID job = cluster.submitJob(env.getStreamGraph().getJobGraph()).get().getJobID();
        assertThat(inputEnded.await(2, TimeUnit.MINUTES)).as("the consumer's input ended").isTrue();
        cluster.deliverCoordinationRequestToCoordinator(
                        job,
                        SchedulerEndpoint.OPERATOR_ID,
                        new SerializedValue<>(new FailTaskRequest("chain", 0)))
                .get(1, TimeUnit.MINUTES);
        released.countDown();

        assertThat(cluster.requestJobResult(job).get(120, TimeUnit.SECONDS).isSuccess()).isTrue();
        Set<String> restarted = Attempts.restarted(cluster.getArchivedExecutionGraph(job).get());
        assertThat(restarted).contains("chain[0]");
        assertThat(restarted)
                .as("the consumer that had ended its input restarted")
                .anyMatch(subtask -> subtask.startsWith("end-gate"));
        assertThat(HashChains.lostInputs(committedLinks(), new String[] {"left", "right"}, NUMBERS))
                .as("inputs lost")
                .isEmpty();
    }

    /**
     * A spill file damaged under a running job (the producers spill their in-flight logs eagerly,
     * and bytes at the start of each file are overwritten): the failed consumer's replay reads them
     * back, their checksums do not match, and the job rolls back globally with that reason in its
     * exception history, instead of being fed damaged records. Nothing lost, nothing twice.
     */
    @Test
    void aDamagedSpillFileRollsBackGloballyNamingItAndStaysExactlyOnce() throws Exception {
        Path spill = Files.createDirectories(work.resolve("spill"));
        startCluster(
                Configuration.fromMap(
                        Map.of(
                                "io.tmp.dirs",
                                spill.toString(),
                                "clonos.in-flight-log.spill-policy",
                                "eager")));
        failing = null;
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARALLELISM);
        // no checkpoint completes before the failure: the replay starts at the producers' start.
        // Flink triggers its first checkpoint at a random delay between the minimum pause and the
        // interval; with both at 10 s it comes 10 s after the start, not at once by chance
        env.enableCheckpointing(10_000);
        env.getCheckpointConfig().setMinPauseBetweenCheckpoints(10_000);
        source(env, "left")
                .keyBy(t -> t.f0)
                .process(new HashChain("chain"))
                .name("chain")
                .addSink(new CommittedLinesSink(output))
                .name("sink")
                .setParallelism(1)
                .disableChaining();
        JobID job = cluster.submitJob(env.getStreamGraph().getJobGraph()).get().getJobID();
        List<Path> spilled = awaitSpilled(spill, 20_000);
        for (Path file : spilled) {
            try (java.nio.channels.FileChannel channel =
                    java.nio.channels.FileChannel.open(
                            file,
                            java.nio.file.StandardOpenOption.READ,
                            java.nio.file.StandardOpenOption.WRITE)) {
                java.nio.ByteBuffer head = java.nio.ByteBuffer.allocate(16);
                channel.read(head, 0);
                for (int i = 0; i < head.limit(); i++) {
                    head.put(i, (byte) ~head.get(i));
                }
                head.rewind();
                channel.write(head, 0);
            }
        }
        long failedAt = System.currentTimeMillis();
        cluster.deliverCoordinationRequestToCoordinator(
                        job,
                        SchedulerEndpoint.OPERATOR_ID,
                        new SerializedValue<>(new FailTaskRequest("chain", 0)))
                .get(1, TimeUnit.MINUTES);

        assertThat(cluster.requestJobResult(job).get(120, TimeUnit.SECONDS).isSuccess()).isTrue();
        AccessExecutionGraph graph = cluster.getArchivedExecutionGraph(job).get();
        assertThat(firstCheckpointTriggered(graph))
                .as("the test's premise: no checkpoint was triggered before the failure")
                .isGreaterThan(failedAt);
        assertThat(Attempts.restarted(graph))
                .as(() -> "the job rolled back" + "; " + Attempts.why(graph))
                .contains("Source: left -> left-tag[0]", "Source: left -> left-tag[1]");
        // the damaged file is named among the job's failures; which failure Flink records as the
        // root depends on what else the rollback cancels first
        List<String> exceptions =
                new ClusterRestClient(cluster.getRestAddress().get()).exceptions(job.toString());
        assertThat(exceptions)
                .as("the job's exceptions")
                .anySatisfy(e -> assertThat(e).contains("lost data").contains("checksum"));
        assertThat(violations(new String[] {"left"}, NUMBERS))
                .as("broken, lossy or repeated hash chains")
                .isEmpty();
    }

    /** When the job's first checkpoint was triggered (ms since the epoch), or MAX_VALUE. */
    private static long firstCheckpointTriggered(AccessExecutionGraph graph) {
        CheckpointStatsSnapshot stats = graph.getCheckpointStatsSnapshot();
        long first = Long.MAX_VALUE;
        if (stats != null) {
            for (AbstractCheckpointStats checkpoint : stats.getHistory().getCheckpoints()) {
                first = Math.min(first, checkpoint.getTriggerTimestamp());
            }
        }
        return first;
    }

    /** The in-flight log files under {@code spill}, once they hold {@code bytes} in all. */
    private static List<Path> awaitSpilled(Path spill, long bytes) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (System.nanoTime() < deadline) {
            List<Path> files;
            try (java.util.stream.Stream<Path> all = Files.walk(spill)) {
                files =
                        all.filter(f -> f.getFileName().toString().startsWith("epoch-"))
                                .collect(java.util.stream.Collectors.toList());
            } catch (java.io.UncheckedIOException | java.nio.file.NoSuchFileException e) {
                continue; // a file went while the walk ran
            }
            long total = 0;
            for (Path file : files) {
                total += Files.exists(file) ? Files.size(file) : 0;
            }
            if (total >= bytes) {
                return files;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the in-flight logs under " + spill + " did not spill " + bytes);
    }

    /**
     * Passes its input on; once its first attempt read the end of its input, it holds that
     * attempt's checkpoints, and with them the job's final one, until the test releases them.
     */
    static final class EndGate extends AbstractStreamOperator<String>
            implements OneInputStreamOperator<String, String>, BoundedOneInput {

        @Override
        public void processElement(StreamRecord<String> element) {
            output.collect(element);
        }

        @Override
        public void endInput() {
            if (isFirstAttempt()) {
                inputEnded.countDown();
            }
        }

        @Override
        public void snapshotState(StateSnapshotContext context) throws Exception {
            super.snapshotState(context);
            if (isFirstAttempt() && inputEnded.getCount() == 0) {
                released.await(1, TimeUnit.MINUTES);
            }
        }

        private boolean isFirstAttempt() {
            return getRuntimeContext().getTaskInfo().getAttemptNumber() == 0;
        }
    }

    /**
     * Injected failures of consecutive tasks at DSD {@code dsd}, every hop counted (the paper's
     * depth): wherever the tasks run, the verdict depends on the depth alone.
     */
    private void consecutiveFailures(String dsd, Set<String> restarted) throws Exception {
        startCluster(
                Configuration.fromMap(
                        Map.of(
                                "clonos.determinant-sharing-depth",
                                dsd,
                                "clonos.determinant-sharing-hops",
                                "every-task")));
        failing = "chain";
        failingToo = "chain2";
        failAfter = NUMBERS / PARALLELISM / 2;
        AccessExecutionGraph graph = run(true);

        assertThat(FAILED_TOO)
                .as("the consecutive injected failures happened")
                .hasSize(everySubtaskFailsToo ? PARALLELISM : 1);
        assertThat(Attempts.restarted(graph)).as(() -> Attempts.why(graph)).isEqualTo(restarted);
        assertThat(violations()).as("broken, lossy or repeated hash chains").isEmpty();
    }

    /**
     * The TaskManager that runs the keyed operator's subtask 0 dies with all its tasks; only those
     * restart. When the sink survived, it hands back their determinants and they replay; when it
     * died too, it restarts from the same checkpoint, so nothing that survived depends on the lost
     * choices and they are made afresh. Exactly-once either way.
     */
    @Test
    void lostTaskManagerIsRecoveredExactlyOnce() throws Exception {
        lostTaskManager(
                jobGraph(false),
                FIRST_STAGE,
                new String[] {"left", "right"},
                NUMBERS,
                Duration.ZERO);
    }

    /**
     * A source whose readers interleave four splits each as their fetcher thread happens to deliver
     * them, as Kafka's reader does with several partitions per subtask: the lost TaskManager's
     * reader emits its splits in its predecessor's order, and only the lost subtasks restart. With
     * {@code late} splits, the enumerator discovers splits while the job runs, as Kafka's discovers
     * new partitions: a split its reader got during the failure's epoch comes back from the
     * coordinator at another point of the recovered reader's run, and its records still go out in
     * the logged order.
     */
    @ParameterizedTest(name = "{0} splits discovered while the job runs")
    @ValueSource(ints = {0, 4})
    void lostTaskManagerWithMultiSplitReadersIsRecoveredExactlyOnce(int late) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARALLELISM);
        // long epochs, and the failure well inside one (below): the recovered reader replays
        // hundreds of records' splits
        env.enableCheckpointing(1_000);
        env.fromSource(
                        new InterleavingSplitsSource(NUMBERS, 4 * PARALLELISM, late, 12_000_000L),
                        WatermarkStrategy.noWatermarks(),
                        "splits")
                .map(new Tag("splits"))
                .name("splits-tag")
                .keyBy(t -> t.f0)
                .process(new HashChain("chain"))
                .name("chain")
                .addSink(new CommittedLinesSink(output))
                .name("sink")
                .setParallelism(1)
                .disableChaining();
        lostTaskManager(
                env.getStreamGraph().getJobGraph(),
                "chain",
                new String[] {"splits"},
                NUMBERS,
                Duration.ofMillis(200 + ThreadLocalRandom.current().nextInt(600)));
    }

    /**
     * Runs the job, loses the TaskManager of {@code stage}'s subtask 0 midway ({@code after} half
     * the links were committed, which happens at a checkpoint), and checks that only that
     * TaskManager's subtasks restarted and the links are exactly once.
     */
    private void lostTaskManager(
            JobGraph jobGraph, String stage, String[] sources, long numbers, Duration after)
            throws Exception {
        startCluster(new Configuration());
        failing = null;
        JobID job = cluster.submitJob(jobGraph).get().getJobID();
        awaitCommittedLinks(numbers / 2);
        Thread.sleep(after.toMillis());
        Map<String, String> locations = Attempts.locations(cluster.getExecutionGraph(job).get());
        String lost = locations.get(stage + "[0]");
        cluster.terminateTaskManager(EmbeddedTaskManagers.indexOf(cluster, lost)).get();

        assertThat(cluster.requestJobResult(job).get(120, TimeUnit.SECONDS).isSuccess()).isTrue();
        Set<String> onLost = new HashSet<>();
        locations.forEach(
                (subtask, taskManager) -> {
                    if (taskManager.equals(lost)) {
                        onLost.add(subtask);
                    }
                });
        Set<String> restarted = Attempts.restarted(cluster.getArchivedExecutionGraph(job).get());
        assertThat(onLost).contains(stage + "[0]");
        assertThat(restarted).as("only the lost TaskManager's tasks restart").isEqualTo(onLost);
        assertThat(violations(sources, numbers))
                .as("broken, lossy or repeated hash chains")
                .isEmpty();
    }

    /**
     * With standby tasks, the lost TaskManager's subtasks are replaced on the TaskManagers of their
     * standbys (spread: never their primaries'), restore from the standbys' local copies of their
     * state, and replay as usual: exactly once.
     */
    @Test
    void lostTaskManagerIsReplacedByStandbysExactlyOnce() throws Exception {
        Path tmp = Files.createDirectories(work.resolve("tmp-" + System.nanoTime()));
        startCluster(
                Configuration.fromMap(
                        Map.of(
                                "clonos.standby.enabled", "true",
                                "io.tmp.dirs", tmp.toString(),
                                "state.checkpoints.dir",
                                        work.resolve("checkpoints-" + System.nanoTime())
                                                .toUri()
                                                .toString(),
                                "state.checkpoint-storage", "filesystem",
                                // RocksDB with incremental checkpoints: the replacement restores
                                // its instance from
                                // the standby's directory, and its next checkpoints refer to the
                                // files it restored
                                "state.backend.type", "rocksdb",
                                "state.backend.incremental", "true",
                                // every piece of state in a file: the standbys have something to
                                // copy
                                "state.storage.fs.memory-threshold", "0")));
        failing = null;
        // long enough to be running still once the standbys have settled and hold a checkpoint
        JobID job = cluster.submitJob(jobGraph(false, false, 3 * NUMBERS)).get().getJobID();
        String subtask = FIRST_STAGE + "[0]";
        awaitStandbysOffTheirPrimaries(job);
        // two more checkpoints: the standbys hold one taken where they run now
        awaitCommittedLinks(committedLinks().size() + 1);
        awaitCommittedLinks(committedLinks().size() + 1);
        Map<String, String> locations = awaitStandbysOffTheirPrimaries(job);
        String lost = locations.get(subtask);
        String standby = locations.get(StandbyVertices.NAME_PREFIX + subtask);
        assertThat(locations.get(FIRST_STAGE + "[1]"))
                .as("the job's tasks got their slots before the standbys, spread over TaskManagers")
                .isNotEqualTo(lost);
        assertThat(cluster.getExecutionGraph(job).get().getState())
                .as("the job still runs")
                .isEqualTo(org.apache.flink.api.common.JobStatus.RUNNING);
        cluster.terminateTaskManager(EmbeddedTaskManagers.indexOf(cluster, lost)).get();

        assertThat(cluster.requestJobResult(job).get(120, TimeUnit.SECONDS).isSuccess()).isTrue();
        AccessExecutionGraph finished = cluster.getArchivedExecutionGraph(job).get();
        assertThat(Attempts.locations(finished).get(subtask))
                .as("the replacement runs where its standby held its state")
                .isEqualTo(standby);
        assertThat(Attempts.numbers(finished).get(subtask))
                .as("the replacement restored from the standby's copies at the first try")
                .isEqualTo(1);
        assertThat(violations()).as("broken, lossy or repeated hash chains").isEmpty();
    }

    /**
     * Waits until every subtask runs and every standby runs on another TaskManager than its primary
     * ({@code clonos.standby.placement: spread}); returns where each runs.
     */
    private Map<String, String> awaitStandbysOffTheirPrimaries(JobID job) throws Exception {
        return StandbyPlacement.awaitSpread(
                cluster, job, Attempts::subtaskName, graph -> true, Duration.ofSeconds(60));
    }

    private static void awaitCommittedLinks(long links) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (committedLinks().size() < links && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(committedLinks().size())
                .as("links committed before the TaskManager is lost")
                .isGreaterThanOrEqualTo((int) links);
    }

    /**
     * Causal logs that outgrow clonos.determinant.memory (one byte: no epoch's log fits) make tasks
     * wait for their checkpoints, then stop growing: a failed task whose consumers hold an epoch
     * that ends in the overflow marker cannot be recovered by determinants and the job rolls back
     * globally; one whose consumers received nothing of the epoch (it waited for memory) restarts
     * afresh. Either way, exactly once.
     */
    @Test
    void logsThatOutgrowTheirMemoryStayExactlyOnce() throws Exception {
        startCluster(Configuration.fromMap(Map.of("clonos.determinant.memory", "1b")));
        failing = "chain";
        failAfter = NUMBERS / PARALLELISM / 2;
        AccessExecutionGraph graph = run();

        assertThat(FAILED).isTrue();
        assertThat(Attempts.restarted(graph))
                .as(() -> Attempts.why(graph))
                .contains(FIRST_STAGE + "[0]");
        assertThat(violations()).as("broken, lossy or repeated hash chains").isEmpty();
    }

    /**
     * A task with two inputs (a keyed co-process function, whose per-key chains depend on how the
     * records of its inputs interleave) is recovered alone and exactly once.
     */
    @Test
    void failedTwoInputTaskIsRecoveredExactlyOnce() throws Exception {
        startCluster(new Configuration());
        failing = "co-chain";
        failAfter = NUMBERS / PARALLELISM / 2;
        StreamExecutionEnvironment env = environment();
        coChain(env, source(env, "left"));
        AccessExecutionGraph graph = run(env.getStreamGraph().getJobGraph());

        assertThat(FAILED).isTrue();
        assertThat(Attempts.restarted(graph))
                .as(() -> Attempts.why(graph))
                .isEqualTo(Set.of("co-chain[0]"));
        assertThat(violations()).as("broken, lossy or repeated hash chains").isEmpty();
    }

    /**
     * A task with three keyed inputs (Flink's {@code MultipleInputStreamTask}), whose per-key
     * chains depend on how the records of its inputs interleave, is recovered alone and exactly
     * once.
     */
    @Test
    void failedMultipleInputTaskIsRecoveredExactlyOnce() throws Exception {
        startCluster(new Configuration());
        failing = "multi-chain";
        failAfter = NUMBERS / PARALLELISM / 2;
        AccessExecutionGraph graph = run(multipleInputJob());

        assertThat(FAILED).isTrue();
        assertThat(Attempts.restarted(graph))
                .as(() -> Attempts.why(graph))
                .isEqualTo(Set.of("multi-chain[0]"));
        assertThat(violations(THREE_SOURCES, NUMBERS))
                .as("broken, lossy or repeated hash chains")
                .isEmpty();
    }

    /** The TaskManager of the three-input task's subtask 0 is lost, with its producers. */
    @Test
    void lostTaskManagerWithMultipleInputTaskIsRecoveredExactlyOnce() throws Exception {
        lostTaskManager(
                multipleInputJob(),
                "multi-chain",
                THREE_SOURCES,
                NUMBERS,
                Duration.ofMillis(200 + ThreadLocalRandom.current().nextInt(600)));
    }

    private static final String[] THREE_SOURCES = {"left", "right", "third"};

    private static JobGraph multipleInputJob() {
        StreamExecutionEnvironment env = environment();
        MultipleInputLinks.keyed(
                        env,
                        "multi-chain",
                        source(env, "left"),
                        source(env, "right"),
                        source(env, "third"))
                .addSink(new CommittedLinesSink(output))
                .name("sink")
                .setParallelism(1)
                .disableChaining();
        return env.getStreamGraph().getJobGraph();
    }

    /**
     * Two sources chained to an operator of three inputs, whose third input comes through the
     * network: the operator's output follows the order in which the task takes its sources' records
     * and its network buffers, as they happen to be available. Its subtask 0 fails and is recovered
     * alone, exactly once. (Flink itself never triggers such a task's checkpoints.)
     */
    @Test
    void failedTaskWithChainedSourcesIsRecoveredExactlyOnce() throws Exception {
        startCluster(new Configuration());
        failing = "chained-multi";
        failAfter = NUMBERS * 3 / PARALLELISM / 2;
        AccessExecutionGraph graph = run(chainedSourcesJob());

        assertThat(FAILED).isTrue();
        assertThat(Attempts.restarted(graph))
                .as(() -> Attempts.why(graph))
                .isEqualTo(Set.of(CHAINED_SOURCES_TASK + "[0]"));
        assertThat(violations(THREE_SOURCES, NUMBERS))
                .as("broken, lossy or repeated hash chains")
                .isEmpty();
    }

    /** The TaskManager of the task with chained sources is lost, with its producers. */
    @Test
    void lostTaskManagerWithChainedSourcesIsRecoveredExactlyOnce() throws Exception {
        lostTaskManager(
                chainedSourcesJob(),
                CHAINED_SOURCES_TASK,
                THREE_SOURCES,
                NUMBERS,
                Duration.ofMillis(200 + ThreadLocalRandom.current().nextInt(600)));
    }

    private static final String CHAINED_SOURCES_TASK =
            "chained-multi [Source: left, Source: right] -> untag";

    private static JobGraph chainedSourcesJob() {
        StreamExecutionEnvironment env = environment();
        MultipleInputLinks.withChainedSources(
                        env,
                        "chained-multi",
                        chainableSource(env, "left"),
                        chainableSource(env, "right"),
                        source(env, "third").rebalance())
                .map(ExactlyOnceITCase::untag)
                .returns(Types.TUPLE(Types.LONG, Types.STRING, Types.LONG))
                .name("untag")
                .keyBy(t -> t.f0)
                .process(new HashChain("chain"))
                .name("chain")
                .addSink(new CommittedLinesSink(output))
                .name("sink")
                .setParallelism(1)
                .disableChaining();
        return env.getStreamGraph().getJobGraph();
    }

    /** As {@link #source}, tagged by the source itself: nothing between it and its consumer. */
    private static DataStream<Tuple3<Long, String, Long>> chainableSource(
            StreamExecutionEnvironment env, String name) {
        return env.fromSource(
                new DataGeneratorSource<>(
                        index -> Tuple3.of((index + 1) % KEYS, name + ":" + (index + 1), index + 1),
                        NUMBERS,
                        RateLimiterStrategy.perSecond(1_500),
                        Types.TUPLE(Types.LONG, Types.STRING, Types.LONG)),
                WatermarkStrategy.noWatermarks(),
                name);
    }

    /** "left:17", as {@link Tag} makes it, -> (17 % keys, "left:17", 17). */
    static Tuple3<Long, String, Long> untag(String tagged) {
        long n = Long.parseLong(tagged.substring(tagged.indexOf(':') + 1));
        return Tuple3.of(n % KEYS, tagged, n);
    }

    /**
     * A producer that finished before the checkpoint its lost consumer restores from has no
     * in-flight log any more (one went with the lost TaskManager, the other's partition was
     * released once read), and the consumer read the end of its output before that checkpoint. Both
     * left subtasks restart with the consumer, finished on restore, so the consumer reads their end
     * again; the right sources and the other consumer keep running.
     */
    @Test
    void producersThatFinishedBeforeTheCheckpointRestartFinishedWithTheirLostConsumer()
            throws Exception {
        startCluster(Configuration.fromMap(Map.of("clonos.recovery.reconnect-timeout", "10 min")));
        failing = null;
        StreamExecutionEnvironment env = environment();
        // the left source ends at once, the right one runs for seconds
        coChain(env, source(env, "left", NUMBERS, 1_000_000));
        JobID job = cluster.submitJob(env.getStreamGraph().getJobGraph()).get().getJobID();
        String left = "Source: left -> left-tag";
        while (!finished(cluster.getExecutionGraph(job).get(), left)) {
            Thread.sleep(20);
        }
        // the next checkpoint but one was triggered after the left subtasks finished
        long completed = completedCheckpoints(job);
        while (completedCheckpoints(job) < completed + 2) {
            Thread.sleep(20);
        }
        Map<String, String> locations = Attempts.locations(cluster.getExecutionGraph(job).get());
        String lost = locations.get("co-chain[0]");
        assertThat(List.of(locations.get(left + "[0]"), locations.get(left + "[1]")))
                .as("a finished left subtask shares the TaskManager of co-chain[0]")
                .contains(lost);
        cluster.terminateTaskManager(EmbeddedTaskManagers.indexOf(cluster, lost)).get();

        assertThat(cluster.requestJobResult(job).get(120, TimeUnit.SECONDS).isSuccess()).isTrue();
        Set<String> expected = new HashSet<>(Set.of(left + "[0]", left + "[1]"));
        locations.forEach(
                (subtask, taskManager) -> {
                    if (taskManager.equals(lost)) {
                        expected.add(subtask);
                    }
                });
        AccessExecutionGraph graph = cluster.getArchivedExecutionGraph(job).get();
        assertThat(Attempts.restarted(graph))
                .as(
                        () ->
                                "the lost TaskManager's tasks and the finished producers restart"
                                        + "; "
                                        + Attempts.why(graph))
                .isEqualTo(expected);
        assertThat(violations()).as("broken, lossy or repeated hash chains").isEmpty();
    }

    private long completedCheckpoints(JobID job) throws Exception {
        return cluster.getExecutionGraph(job)
                .get()
                .getCheckpointStatsSnapshot()
                .getCounts()
                .getNumberOfCompletedCheckpoints();
    }

    private static boolean finished(AccessExecutionGraph graph, String vertexName) {
        int subtasks = 0;
        for (AccessExecutionVertex vertex : graph.getAllExecutionVertices()) {
            if (vertex.getTaskNameWithSubtaskIndex().startsWith(vertexName + " (")) {
                subtasks++;
                if (vertex.getExecutionState() != ExecutionState.FINISHED) {
                    return false;
                }
            }
        }
        // none while the job is being created
        return subtasks > 0;
    }

    /** {@code left} and the right source, keyed and connected, into the co-chain and the sink. */
    private static void coChain(
            StreamExecutionEnvironment env, DataStream<Tuple3<Long, String, Long>> left) {
        left.keyBy(t -> t.f0)
                .connect(source(env, "right").keyBy(t -> t.f0))
                .process(new CoHashChain())
                .name("co-chain")
                .addSink(new CommittedLinesSink(output))
                .name("sink")
                .setParallelism(1);
    }

    /** One hash chain per key over the records of both inputs, in the order the task reads them. */
    static final class CoHashChain
            extends KeyedCoProcessFunction<
                    Long, Tuple3<Long, String, Long>, Tuple3<Long, String, Long>, String> {
        private transient ValueState<Tuple2<Long, Long>> chain;
        private long seen;

        @Override
        public void open(OpenContext openContext) {
            chain =
                    getRuntimeContext()
                            .getState(
                                    new ValueStateDescriptor<>(
                                            "seq-and-digest", Types.TUPLE(Types.LONG, Types.LONG)));
        }

        @Override
        public void processElement1(
                Tuple3<Long, String, Long> in, Context ctx, Collector<String> out)
                throws Exception {
            link(in, out);
        }

        @Override
        public void processElement2(
                Tuple3<Long, String, Long> in, Context ctx, Collector<String> out)
                throws Exception {
            link(in, out);
        }

        private void link(Tuple3<Long, String, Long> in, Collector<String> out) throws Exception {
            maybeFail(getRuntimeContext(), "co-chain", ++seen);
            out.collect(
                    HashChains.link(chain, in.f0, HashChains.mix(in.f2, in.f1.hashCode()), in.f1));
        }
    }

    /**
     * A task with async I/O whose results arrive in a random order, after random delays, with
     * random content (and sometimes at once, on the task thread) is recovered alone and exactly
     * once: its results take effect where, and as, its predecessor logged them. The keyed stage
     * after it chains the results in the order it gets them.
     */
    @Test
    void failedAsyncIoTaskIsRecoveredExactlyOnce() throws Exception {
        failedAsyncIoTask(false, null);
    }

    /** The same with ordered output: results wait for their predecessors' before they leave. */
    @Test
    void failedOrderedAsyncIoTaskIsRecoveredExactlyOnce() throws Exception {
        failedAsyncIoTask(true, null);
    }

    /**
     * The same with Flink's retry strategy: a third of the answers (by their random digest), and
     * the first call of one record in seven (it fails), are retried after a back-off, up to three
     * calls a record. The replay applies the logged answers that took effect and retries nothing.
     */
    @Test
    void failedRetryingAsyncIoTaskIsRecoveredExactlyOnce() throws Exception {
        RETRIES.set(0);
        failedAsyncIoTask(
                false,
                new AsyncRetryStrategies.FixedDelayRetryStrategyBuilder<Tuple3<Long, String, Long>>(
                                3, 2)
                        .ifResult(new DigestDivisibleByThree())
                        .ifException(RetryPredicates.HAS_EXCEPTION_PREDICATE)
                        .build());
        assertThat(RETRIES.get()).as("calls retried").isPositive();
    }

    private void failedAsyncIoTask(
            boolean ordered, @Nullable AsyncRetryStrategy<Tuple3<Long, String, Long>> retry)
            throws Exception {
        startCluster(new Configuration());
        failing = "lookup";
        failAfter = NUMBERS / PARALLELISM / 2;
        StreamExecutionEnvironment env = environment();
        DataStream<Tuple3<Long, String, Long>> rekeyed =
                source(env, "left")
                        .union(source(env, "right"))
                        .keyBy(t -> t.f0)
                        .process(new HashChain("chain"))
                        .name("chain")
                        .map(ExactlyOnceITCase::rekey)
                        .returns(Types.TUPLE(Types.LONG, Types.STRING, Types.LONG))
                        .name("rekey");
        NondeterministicLookup lookup = new NondeterministicLookup(retry != null);
        SingleOutputStreamOperator<Tuple3<Long, String, Long>> looked;
        if (retry != null) {
            looked =
                    AsyncDataStream.unorderedWaitWithRetry(
                            rekeyed, lookup, 30, TimeUnit.SECONDS, 4, retry);
        } else if (ordered) {
            looked = AsyncDataStream.orderedWait(rekeyed, lookup, 30, TimeUnit.SECONDS, 4);
        } else {
            looked = AsyncDataStream.unorderedWait(rekeyed, lookup, 30, TimeUnit.SECONDS, 4);
        }
        looked.name("lookup");
        AccessExecutionGraph graph = run(hashChainsToSink(looked, "chain2"));

        assertThat(FAILED).as("the injected failure happened").isTrue();
        assertThat(Attempts.restarted(graph))
                .as(() -> Attempts.why(graph))
                .isEqualTo(Set.of("chain -> rekey -> lookup[0]"));
        assertThat(violations()).as("broken, lossy or repeated hash chains").isEmpty();
    }

    /** Retries an answer whose digest is divisible by three: a third of them, at random. */
    static final class DigestDivisibleByThree
            implements java.util.function.Predicate<Collection<Tuple3<Long, String, Long>>>,
                    java.io.Serializable {
        @Override
        public boolean test(Collection<Tuple3<Long, String, Long>> results) {
            return results.iterator().next().f2 % 3 == 0;
        }
    }

    /** How many calls of the lookup were retries of a record's earlier call. */
    static final AtomicInteger RETRIES = new AtomicInteger();

    /**
     * Answers after a random delay with a random digest; one record in five at once. With retries
     * on, the first call of one record in seven fails. The delay comes from {@link CausalServices}
     * (a new instance per call, whose first draw would log a seed): what a call chooses must not be
     * logged, since a replay does not call.
     */
    static final class NondeterministicLookup
            extends RichAsyncFunction<Tuple3<Long, String, Long>, Tuple3<Long, String, Long>> {
        private final boolean failsFirstCalls;
        private transient ExecutorService threads;
        private transient Set<String> called;
        private long seen;

        NondeterministicLookup(boolean failsFirstCalls) {
            this.failsFirstCalls = failsFirstCalls;
        }

        @Override
        public void open(OpenContext openContext) {
            threads = Executors.newFixedThreadPool(3);
            called = ConcurrentHashMap.newKeySet();
        }

        @Override
        public void asyncInvoke(
                Tuple3<Long, String, Long> in, ResultFuture<Tuple3<Long, String, Long>> result) {
            maybeFail(getRuntimeContext(), "lookup", ++seen);
            boolean first = called.add(in.f1);
            if (!first) {
                RETRIES.incrementAndGet();
            }
            if (failsFirstCalls && first && in.f2 % 7 == 0) {
                // at once, on the task thread: a failure that arrived after the end of input would
                // not be retried (as in Flink) and would fail the task
                result.completeExceptionally(new IOException("lookup failed"));
                return;
            }
            if (in.f2 % 5 == 0) {
                result.complete(List.of(answer(in)));
                return;
            }
            // drawn on the task thread from the task's causal random numbers (Flink hands async
            // functions a runtime context of their own, without the task's services): a choice
            // of the call, which a replay does not make again (it does not call), so not logged
            long delayNanos = CausalServices.ofTaskThread().random().nextInt(2_000_000);
            threads.execute(
                    () -> {
                        LockSupport.parkNanos(delayNanos);
                        result.complete(List.of(answer(in)));
                    });
        }

        private static Tuple3<Long, String, Long> answer(Tuple3<Long, String, Long> in) {
            return Tuple3.of(
                    in.f0, in.f1, HashChain.mix(in.f2, ThreadLocalRandom.current().nextLong()));
        }

        @Override
        public void close() {
            threads.shutdownNow();
        }
    }

    /** Without determinants the same failure breaks the chains: the validator can fail. */
    @Test
    void withoutCausalLoggingTheRecoveryDiverges() throws Exception {
        startCluster(Configuration.fromMap(Map.of("clonos.determinant-sharing-depth", "0")));
        failing = "chain";
        failAfter = NUMBERS / PARALLELISM / 2;
        AccessExecutionGraph graph = run();

        assertThat(FAILED).isTrue();
        assertThat(Attempts.restarted(graph))
                .as(() -> Attempts.why(graph))
                .isEqualTo(Set.of(FIRST_STAGE + "[0]"));
        assertThat(violations()).as("what the validator finds").isNotEmpty();
    }

    private AccessExecutionGraph run() throws Exception {
        return run(false);
    }

    private AccessExecutionGraph run(boolean twoStages) throws Exception {
        return run(jobGraph(twoStages, false));
    }

    private AccessExecutionGraph run(JobGraph jobGraph) throws Exception {
        JobID job = cluster.submitJob(jobGraph).get().getJobID();
        JobResult result;
        try {
            result = cluster.requestJobResult(job).get(120, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError(
                    "The job did not end within 120 s; the threads:\n" + ThreadDumps.all(), e);
        }
        assertThat(result.isSuccess()).isTrue();
        return cluster.getArchivedExecutionGraph(job).get();
    }

    /**
     * The source's numbers are held back until checkpoint 3 completed: the source goes idle (its
     * outputs announce the idle status), checkpoints complete while it is idle, then its records
     * come and it goes active. It fails 100 ms later, before the next checkpoint: the recovered
     * source restores an epoch that began idle, and must send the active status its predecessor
     * sent (Flink's outputs, which start active, would drop it and the bytes would differ).
     */
    @Test
    void failedSourceThatWasIdleAtItsCheckpointIsRecoveredExactlyOnce() throws Exception {
        startCluster(new Configuration());
        failing = "left-tag";
        failAfter = 75;
        StreamExecutionEnvironment env = environment();
        env.enableCheckpointing(1_000);
        env.getConfig().setAutoWatermarkInterval(50);
        DataStream<Tuple3<Long, String, Long>> left =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        index -> index + 1, 3_000, new IdleFirst(), Types.LONG),
                                WatermarkStrategy.<Long>forMonotonousTimestamps()
                                        .withTimestampAssigner((n, previous) -> n)
                                        .withIdleness(Duration.ofMillis(200)),
                                "left")
                        .map(new Tag("left"))
                        .name("left-tag");
        AccessExecutionGraph graph = run(hashChainsToSink(left, "chain"));

        assertThat(FAILED).as("the injected failure happened").isTrue();
        assertThat(Attempts.restarted(graph))
                .as(() -> Attempts.why(graph))
                .isEqualTo(Set.of("Source: left -> left-tag[0]"));
        assertThat(violations(new String[] {"left"}, 3_000))
                .as("broken, lossy or repeated hash chains")
                .isEmpty();
    }

    /**
     * The job that ends in {@code in}'s keyed hash chains ({@code name}) and the sink that commits
     * their links.
     */
    private static JobGraph hashChainsToSink(
            DataStream<Tuple3<Long, String, Long>> in, String name) {
        in.keyBy(t -> t.f0)
                .process(new HashChain(name))
                .name(name)
                .addSink(new CommittedLinesSink(output))
                .name("sink")
                .setParallelism(1)
                .disableChaining();
        return in.getExecutionEnvironment().getStreamGraph().getJobGraph();
    }

    /** Whether an {@link IdleFirst} source was let go: a recovered reader is not held back. */
    private static final AtomicBoolean IDLE_PHASE_OVER = new AtomicBoolean();

    /** Holds a source back until checkpoint 3 completed, then paces it at 1500 per second. */
    static final class IdleFirst implements RateLimiterStrategy {
        @Override
        public org.apache.flink.api.connector.source.util.ratelimit.RateLimiter createRateLimiter(
                int parallelism) {
            org.apache.flink.api.connector.source.util.ratelimit.RateLimiter paced =
                    RateLimiterStrategy.perSecond(1_500).createRateLimiter(parallelism);
            CompletableFuture<Void> open = new CompletableFuture<>();
            if (IDLE_PHASE_OVER.get()) {
                open.complete(null);
            }
            return new org.apache.flink.api.connector.source.util.ratelimit.RateLimiter() {
                @Override
                public java.util.concurrent.CompletionStage<Void> acquire() {
                    return open.isDone() ? paced.acquire() : open;
                }

                @Override
                public void notifyCheckpointComplete(long checkpointId) {
                    paced.notifyCheckpointComplete(checkpointId);
                    if (checkpointId >= 3) {
                        IDLE_PHASE_OVER.set(true);
                        open.complete(null);
                    }
                }
            };
        }
    }

    /**
     * The keyed operator's output goes round-robin ({@code rebalance()}, which starts at a random
     * channel) to the second stage: the recovered task must send every record to the channel its
     * predecessor sent it to.
     */
    @Test
    void failedTaskWithRebalancedOutputIsRecoveredExactlyOnce() throws Exception {
        startCluster(new Configuration());
        failing = "chain";
        failAfter = NUMBERS / PARALLELISM / 2;
        AccessExecutionGraph graph = run(jobGraph(true, true));

        assertThat(FAILED).as("the injected failure happened").isTrue();
        assertThat(Attempts.restarted(graph))
                .as(() -> Attempts.why(graph))
                .isEqualTo(Set.of("chain[0]"));
        assertThat(violations()).as("broken, lossy or repeated hash chains").isEmpty();
    }

    /**
     * A legacy SourceFunction emits from a thread of its own; the checkpoints take the checkpoint
     * lock between its records wherever they get it. The recovered source task passes them at its
     * predecessor's places: its consumer, which read the predecessor's barriers, dedupes the
     * regenerated records up to the same barriers.
     */
    @Test
    void failedLegacySourceTaskIsRecoveredExactlyOnce() throws Exception {
        startCluster(new Configuration());
        failing = "legacy-tag";
        failAfter = NUMBERS / PARALLELISM / 2;
        AccessExecutionGraph graph = run(legacySourceJob());

        assertThat(FAILED).as("the injected failure happened").isTrue();
        assertThat(Attempts.restarted(graph))
                .as(() -> Attempts.why(graph))
                .isEqualTo(Set.of("Source: legacy -> legacy-tag[0]"));
        assertThat(violations(new String[] {"legacy"}, NUMBERS))
                .as("broken, lossy or repeated hash chains")
                .isEmpty();
    }

    /** The TaskManager of a legacy source's subtask and its consumer's is lost. */
    @Test
    void lostTaskManagerWithLegacySourceIsRecoveredExactlyOnce() throws Exception {
        lostTaskManager(
                legacySourceJob(),
                "chain",
                new String[] {"legacy"},
                NUMBERS,
                Duration.ofMillis(200 + ThreadLocalRandom.current().nextInt(600)));
    }

    private static JobGraph legacySourceJob() {
        StreamExecutionEnvironment env = environment();
        env.addSource(new LegacyNumbersSource(NUMBERS, 1_500), "legacy")
                .map(new Tag("legacy"))
                .name("legacy-tag")
                .keyBy(t -> t.f0)
                .process(new HashChain("chain"))
                .name("chain")
                .addSink(new CommittedLinesSink(output))
                .name("sink")
                .setParallelism(1)
                .disableChaining();
        return env.getStreamGraph().getJobGraph();
    }

    private static JobGraph jobGraph(boolean twoStages) {
        return jobGraph(twoStages, false);
    }

    private static JobGraph jobGraph(boolean twoStages, boolean rebalanced) {
        return jobGraph(twoStages, rebalanced, NUMBERS);
    }

    /** The job, its sources emitting {@code numbers} numbers each. */
    private static JobGraph jobGraph(boolean twoStages, boolean rebalanced, long numbers) {
        StreamExecutionEnvironment env = environment();
        DataStream<Tuple3<Long, String, Long>> left = source(env, "left", numbers);
        DataStream<Tuple3<Long, String, Long>> right = source(env, "right", numbers);
        DataStream<String> links =
                left.union(right).keyBy(t -> t.f0).process(new HashChain("chain")).name("chain");
        if (twoStages) {
            // a second keyed stage, fed by the first through a shuffle: links rekeyed by digest
            SingleOutputStreamOperator<Tuple3<Long, String, Long>> rekeyed =
                    (rebalanced ? links.rebalance() : links)
                            .map(ExactlyOnceITCase::rekey)
                            .returns(Types.TUPLE(Types.LONG, Types.STRING, Types.LONG))
                            .name("rekey");
            if (rebalanced) {
                // five channels: Flink's rebalance would pick its predecessor's channel by chance
                // one time in five
                rekeyed.setParallelism(5);
            }
            links = rekeyed.keyBy(t -> t.f0).process(new HashChain("chain2")).name("chain2");
        } else {
            // processing-time windows over each key's links, chained to the keyed operator: the
            // windows of all keys end at the same instant and fire together
            DataStream<String> windows =
                    DataStreamUtils.reinterpretAsKeyedStream(links, HashChains::keyOf, Types.LONG)
                            .window(TumblingProcessingTimeWindows.of(Duration.ofMillis(100)))
                            .process(new HashChainJob.WindowChain())
                            .name("window");
            links = links.union(windows);
        }
        links.addSink(new CommittedLinesSink(output))
                .name("sink")
                .setParallelism(1)
                .disableChaining();
        return env.getStreamGraph().getJobGraph();
    }

    /** The tests' environment: parallelism 2, a checkpoint every 250 ms. */
    private static StreamExecutionEnvironment environment() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARALLELISM);
        env.enableCheckpointing(250);
        return env;
    }

    private static DataStream<Tuple3<Long, String, Long>> source(
            StreamExecutionEnvironment env, String name) {
        return source(env, name, NUMBERS);
    }

    private static DataStream<Tuple3<Long, String, Long>> source(
            StreamExecutionEnvironment env, String name, long numbers) {
        return source(env, name, numbers, 1_500);
    }

    /** A source of {@code numbers} numbers at {@code rate} per second. */
    private static DataStream<Tuple3<Long, String, Long>> source(
            StreamExecutionEnvironment env, String name, long numbers, double rate) {
        return env.fromSource(
                        new DataGeneratorSource<>(
                                index -> index + 1,
                                numbers,
                                RateLimiterStrategy.perSecond(rate),
                                Types.LONG),
                        WatermarkStrategy.noWatermarks(),
                        name)
                .map(new Tag(name))
                .name(name + "-tag");
    }

    /**
     * A link of the first stage as input of the second: (key by digest, the link's input, digest).
     */
    static Tuple3<Long, String, Long> rekey(String link) {
        String[] f = link.split(",");
        long digest = Long.parseLong(f[3]);
        return Tuple3.of((digest & Long.MAX_VALUE) % KEYS, f[4], digest);
    }

    /** n -> (key, source, n); chained to its source, so a failure here fails the source task. */
    static final class Tag extends RichMapFunction<Long, Tuple3<Long, String, Long>> {
        private final String source;
        private long seen;

        Tag(String source) {
            this.source = source;
        }

        @Override
        public Tuple3<Long, String, Long> map(Long n) {
            maybeFail(getRuntimeContext(), source + "-tag", ++seen);
            return Tuple3.of(n % KEYS, source + ":" + n, n);
        }
    }

    static void maybeFail(
            org.apache.flink.api.common.functions.RuntimeContext context,
            String operator,
            long seen) {
        int subtask = context.getTaskInfo().getIndexOfThisSubtask();
        if (context.getTaskInfo().getAttemptNumber() != 0) {
            return;
        }
        if (subtask == 0
                && operator.equals(failing)
                && seen == failAfter
                && FAILED.compareAndSet(false, true)) {
            throw new RuntimeException(
                    "Injected failure of " + operator + "[0] after " + seen + " records");
        }
        if ((subtask == 0 || everySubtaskFailsToo)
                && operator.equals(failingToo)
                && FAILED.get()
                && FAILED_TOO.add(subtask)) {
            throw new RuntimeException(
                    "Injected failure of "
                            + operator
                            + "["
                            + subtask
                            + "] right after the first failure");
        }
    }

    /**
     * Extends each key's hash chain with every record and every timer. The digest depends on the
     * order of the records, the processing time, the causal time and the causal random numbers.
     */
    static final class HashChain
            extends KeyedProcessFunction<Long, Tuple3<Long, String, Long>, String> {
        private final String name;
        private transient ValueState<Tuple2<Long, Long>> chain;
        private transient CausalServices causal;
        private long seen;

        HashChain(String name) {
            this.name = name;
        }

        @Override
        public void open(OpenContext openContext) {
            chain =
                    getRuntimeContext()
                            .getState(
                                    new ValueStateDescriptor<>(
                                            "seq-and-digest", Types.TUPLE(Types.LONG, Types.LONG)));
            causal = CausalServices.of(getRuntimeContext());
        }

        @Override
        public void processElement(
                Tuple3<Long, String, Long> in, Context ctx, Collector<String> out)
                throws Exception {
            maybeFail(getRuntimeContext(), name, ++seen);
            long now = ctx.timerService().currentProcessingTime();
            // the timers of all keys are due at the same instant
            ctx.timerService().registerProcessingTimeTimer(now - now % 50 + 50);
            long value =
                    mix(
                            mix(mix(in.f2, in.f1.hashCode()), now),
                            mix(causal.currentTimeMillis(), causal.random().nextInt()));
            link(out, in.f0, value, in.f1);
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out)
                throws Exception {
            link(
                    out,
                    ctx.getCurrentKey(),
                    mix(timestamp, ctx.timerService().currentProcessingTime()),
                    name + "-timer:" + ctx.getCurrentKey() + ":" + timestamp);
        }

        private void link(Collector<String> out, long key, long value, String input)
                throws Exception {
            out.collect(HashChains.link(chain, key, value, input));
        }

        static long mix(long a, long b) {
            return HashChains.mix(a, b);
        }
    }

    /** What the sink's links show: gaps, repeats, broken digests, inputs lost or seen twice. */
    private static List<String> violations() {
        return violations(new String[] {"left", "right"}, NUMBERS);
    }

    private static List<String> violations(String[] sources, long numbers) {
        try {
            return HashChains.violations(committedLinks(), sources, numbers);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static List<String> committedLinks() throws java.io.IOException {
        Path directory = Paths.get(output);
        return Files.isDirectory(directory)
                ? CommittedLinesSink.committedLines(directory)
                : List.of();
    }
}
