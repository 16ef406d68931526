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

package io.clonos.streaming.tasks;

import io.clonos.runtime.causal.CausalLogId;
import io.clonos.runtime.causal.CausalRecovery;
import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.DeterminantMemory;
import io.clonos.runtime.causal.HeldCausalLogs;
import io.clonos.runtime.causal.TaskCausalLog;
import io.clonos.runtime.configuration.ClonosOptions;
import io.clonos.runtime.network.ClonosInputGate;
import io.clonos.runtime.network.ClonosNetworkContext;
import io.clonos.runtime.network.OrderInProgress;
import io.clonos.runtime.network.PendingBarriers;
import io.clonos.runtime.network.SubpartitionLogMetrics;
import io.clonos.runtime.scheduler.LostTaskManagerReport;
import io.clonos.runtime.scheduler.ReplayEndReport;
import io.clonos.runtime.shuffle.ClonosShuffleServiceFactory;
import io.clonos.streaming.causal.CausalTimers;
import io.clonos.streaming.partitioner.CausalPartitioners;
import io.clonos.streaming.source.CausalSourceReader;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.connector.source.ExternallyInducedSourceReader;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.checkpoint.CheckpointMetaData;
import org.apache.flink.runtime.checkpoint.CheckpointMetricsBuilder;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.api.writer.RecordWriterDelegate;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.api.operators.ClonosLegacySourcePatch;
import org.apache.flink.streaming.api.operators.ClonosSourceReaderPatch;
import org.apache.flink.streaming.api.operators.SourceOperator;
import org.apache.flink.streaming.api.operators.StreamSource;
import org.apache.flink.streaming.runtime.io.ClonosNetworkInputPatch;
import org.apache.flink.streaming.runtime.io.StreamInputProcessor;
import org.apache.flink.streaming.runtime.tasks.ClonosOutputStatusPatch;
import org.apache.flink.streaming.runtime.tasks.OperatorChain;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeServiceFactory;
import org.apache.flink.streaming.runtime.tasks.mailbox.MailboxDefaultAction;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.function.ThrowingConsumer;
import org.apache.flink.util.function.ThrowingRunnable;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What a Clonos stream task adds to Flink's: its epoch, its input gates told where it was restored
 * from, its in-flight logs truncated when a checkpoint completes, and the {@code clonos} metrics.
 * Every Clonos task class holds one, so the protocol lives here once, whatever Flink task class the
 * Clonos task extends.
 *
 * <p>With causal logging ({@code clonos.determinant-sharing-depth} not 0) it also holds the task's
 * {@link CausalTask}: the causal log, the recovery state machine, the replayable timers, and the
 * wiring that lets the input gates, output subpartitions and user functions reach them.
 */
@Internal
public final class CausalTaskContext {

    private static final Logger LOG = LoggerFactory.getLogger(CausalTaskContext.class);

    private final Environment environment;
    @Nullable private final CausalTask causal;

    /** The logged network read a replay is partway through; null without causal logging. */
    @Nullable private OrderInProgress networkRead;

    @Nullable private final CausalTimers timers;

    private final EpochTracker epochs;
    private final HeldAborts aborts;

    /** The Clonos context of the TaskManager that runs the task. */
    private final ClonosNetworkContext network;

    /** Null if the job takes no checkpoints: then a full in-memory log never holds it back. */
    @Nullable private final PendingBarriers pendingBarriers;

    private final List<ClonosInputGate> gates;
    private final List<ResultPartitionID> partitions = new ArrayList<>();
    private final Map<String, SubpartitionLogMetrics> logMetrics = new LinkedHashMap<>();

    private CausalTaskContext(Environment environment) {
        this.environment = environment;
        long restored =
                environment
                        .getTaskStateManager()
                        .getRestoreCheckpointId()
                        .orElse(ClonosInputGate.NOT_RESTORED);
        this.epochs = EpochTracker.startingAt(restored);
        this.aborts = new HeldAborts(epochs);
        this.network = ClonosShuffleServiceFactory.networkOf(environment);
        this.gates = ClonosNetworkContext.clonosGates(environment.getAllInputGates());
        String taskName = environment.getTaskInfo().getTaskNameWithSubtasks();
        java.util.function.Consumer<java.net.InetSocketAddress> lostPeers =
                LostTaskManagerReport.reporter(
                        environment.getOperatorCoordinatorEventGateway(), taskName);
        for (ClonosInputGate gate : gates) {
            gate.setRestoredCheckpointId(restored);
            gate.setLostPeerReporter(lostPeers);
        }
        MetricGroup group = environment.getMetricGroup().addGroup(EpochTracker.METRIC_GROUP);
        ResultPartitionWriter[] writers = environment.getAllWriters();
        java.util.function.Consumer<java.net.InetSocketAddress> lostConsumers =
                LostTaskManagerReport.consumerReporter(
                        environment.getOperatorCoordinatorEventGateway(), taskName);
        for (int w = 0; w < writers.length; w++) {
            partitions.add(writers[w].getPartitionId());
            network.consumerConnections().register(writers[w].getPartitionId(), lostConsumers);
            for (int i = 0; i < writers[w].getNumberOfSubpartitions(); i++) {
                SubpartitionLogMetrics metrics =
                        network.subpartitionLogs().metrics(writers[w].getPartitionId(), i);
                logMetrics.put(w + "_" + i, metrics);
            }
        }
        InFlightLogMetrics.register(group, epochs, logMetrics);
        this.pendingBarriers =
                new StreamConfig(environment.getTaskConfiguration()).isCheckpointingEnabled()
                        ? PendingBarriers.register(network, gates, partitions)
                        : null;
        // a task the JobManager restarts afresh (every rollback, so every restart with
        // clonos.recovery.mode: global, or at-least-once after lost determinants) has no
        // predecessor's output to reproduce
        boolean fresh = network.startsFresh(partitions);
        // a task Flink deploys finished on restore (a finished producer restarting with its
        // consumers) only ends its output again: it makes no choice and nobody replays it
        this.causal =
                FinishedOnRestore.prepare(environment)
                        ? null
                        : createCausalTask(environment, restored, !fresh);
        this.timers = causal == null ? null : new CausalTimers(causal);
        if (causal != null) {
            CausalTaskMetrics.register(group, causal);
        }
    }

    /** The context of a task that replays its input by determinants when it recovers. */
    public static CausalTaskContext create(
            Environment environment, RecordWriterDelegate<?> recordWriters) {
        return new CausalTaskContext(environment).bindPartitioners(recordWriters);
    }

    /** The task's replayable partitioners log their choices with the task's. */
    private CausalTaskContext bindPartitioners(RecordWriterDelegate<?> recordWriters) {
        CausalPartitioners.bind(recordWriters, environment.getAllWriters().length, causal);
        return this;
    }

    @Nullable
    private CausalTask createCausalTask(
            Environment environment, long restored, boolean replaysWithDeterminants) {
        int dsd = environment.getTaskConfiguration().get(ClonosOptions.DETERMINANT_SHARING_DEPTH);
        if (dsd == 0) {
            return null;
        }
        String taskName = environment.getTaskInfo().getTaskNameWithSubtasks();
        CausalLogId id =
                CausalLogId.main(
                        environment.getJobVertexId().toHexString(),
                        environment.getTaskInfo().getIndexOfThisSubtask());
        ResultPartitionWriter[] writers = environment.getAllWriters();
        int consumers = 0;
        for (ResultPartitionWriter writer : writers) {
            consumers += writer.getNumberOfSubpartitions();
        }
        Duration timeout = network.reconnectTimeout();
        boolean recovering =
                replaysWithDeterminants && environment.getTaskInfo().getAttemptNumber() > 0;
        CausalRecovery recovery =
                recovering
                        ? CausalRecovery.recovering(
                                taskName, id, restored, consumers, timeout, network.deadlines())
                        : CausalRecovery.notRecovering(taskName, id);
        int channels = gates.stream().mapToInt(IndexedInputGate::getNumberOfInputChannels).sum();
        long granularity =
                environment
                        .getTaskConfiguration()
                        .get(ClonosOptions.TIME_SERVICE_GRANULARITY)
                        .toMillis();
        DeterminantMemory memory =
                new DeterminantMemory(
                        environment
                                .getTaskConfiguration()
                                .get(ClonosOptions.DETERMINANT_MEMORY)
                                .getBytes());
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(id, restored, memory),
                        new HeldCausalLogs(memory),
                        recovery,
                        channels,
                        granularity,
                        dsd);
        task.setFailureHandler(environment::failExternally);
        if (environment.getTaskInfo().getAttemptNumber() > 0) {
            task.replacedAFailedAttempt();
        }
        task.setRegeneratesPredecessorStream(this::regeneratesPredecessorStream);
        int firstChannel = 0;
        OrderInProgress inProgress = new OrderInProgress(recovery);
        networkRead = inProgress;
        for (ClonosInputGate gate : gates) {
            gate.enableCausalLogging(task, firstChannel, inProgress);
            firstChannel += gate.getNumberOfInputChannels();
        }
        int firstConsumer = 0;
        for (ResultPartitionWriter writer : writers) {
            ResultPartitionID partition = writer.getPartitionId();
            int first = firstConsumer;
            network.causalTasks().register(partition, task, first, restored);
            firstConsumer += writer.getNumberOfSubpartitions();
        }
        LOG.info("{}: causal logging on (DSD {}), recovery {}.", taskName, dsd, recovery.state());
        return task;
    }

    /** Clonos's processing-time services: Flink's, with causal time and replayable timers. */
    public ProcessingTimeServiceFactory wrap(ProcessingTimeServiceFactory flink) {
        if (timers == null) {
            return flink;
        }
        return mailboxExecutor -> timers.wrap(flink.createProcessingTimeService(mailboxExecutor));
    }

    /**
     * The task enters its mailbox loop: from now on its choices are determinants; a restarted task
     * tells the JobManager when its replay ends, so that checkpoints held back for it resume.
     */
    public void processingStarted() {
        if (causal != null) {
            causal.processingStarted();
        }
        ReplayEndReport.sendOnceRunning(environment, causal == null ? null : causal.recovery());
    }

    /** The task ends: its partitions no longer need it. */
    public void closed() {
        for (ResultPartitionID partition : partitions) {
            network.causalTasks().unregister(partition);
            network.consumerConnections().unregister(partition);
        }
    }

    /**
     * Called once the task's input processor exists: a channel whose producer died has its partial
     * record dropped before the restarted producer's data arrives; under causal logging the
     * elements are counted, the watermarks the inputs hand the chain's head operator are logged,
     * and a replay can announce the chain's outputs idle.
     */
    public void inputProcessorCreated(StreamInputProcessor processor, OperatorChain<?, ?> chain) {
        if (processor == null) {
            return;
        }
        Object headOperator = chain.getMainOperator();
        for (ClonosInputGate gate : gates) {
            int gateIndex = gate.getGateIndex();
            gate.setChannelResetListener(
                    channel ->
                            ClonosNetworkInputPatch.reset(
                                    processor, new InputChannelInfo(gateIndex, channel)));
        }
        if (causal != null) {
            ClonosNetworkInputPatch.countElements(
                    processor,
                    environment.getIOManager().getSpillingDirectoriesPaths(),
                    causal,
                    headOperator);
            restoresOutputStatus(chain);
        }
    }

    /** A replay can tell the chain's outputs that its predecessor's had announced idleness. */
    private void restoresOutputStatus(OperatorChain<?, ?> chain) {
        causal.watermarks().setIdleOutputs(() -> ClonosOutputStatusPatch.announceIdle(chain));
    }

    /**
     * A source task's input processor exists: under causal logging it holds back a recovering
     * source and replays its timers and checkpoints. Returns the processor the task is to use.
     */
    public StreamInputProcessor sourceInputCreated(StreamInputProcessor processor) {
        if (causal == null || processor == null) {
            return processor;
        }
        ClonosNetworkInputPatch.countSourceElements(processor, causal);
        return new CausalSourceInput(processor, causal);
    }

    /**
     * Whether a replay is partway through a logged network read (a producer that recovered too cut
     * its buffers elsewhere): until its last bytes are handed out, no source chained to the task
     * may emit, although the next determinant is the source's.
     */
    public boolean replaysNetworkRead() {
        return networkRead != null && networkRead.isOpen();
    }

    /**
     * A FLIP-27 source's reader exists: under causal logging the order in which it emits its
     * splits' records is logged and replayed. Returns the reader that does so, or null when the
     * source keeps Flink's (no causal logging; a reader whose checkpoints its source triggers). The
     * source is the task's input {@code input}, chained to an operator of several inputs if {@code
     * chained}.
     */
    @Nullable
    public <T> CausalSourceReader<T, ?> orderSourceReader(
            SourceOperator<T, ?> operator,
            TypeSerializer<T> serializer,
            int input,
            boolean chained) {
        if (causal == null
                || operator.getSourceReader() == null
                || operator.getSourceReader() instanceof ExternallyInducedSourceReader) {
            return null;
        }
        return orderSplits(operator, serializer, input, chained);
    }

    private <T, SplitT extends SourceSplit> CausalSourceReader<T, SplitT> orderSplits(
            SourceOperator<T, SplitT> operator,
            TypeSerializer<T> serializer,
            int input,
            boolean chained) {
        CausalSourceReader<T, SplitT> ordered =
                new CausalSourceReader<>(
                        operator.getSourceReader(), causal, serializer, input, chained);
        ClonosSourceReaderPatch.replaceReader(operator, ordered);
        return ordered;
    }

    /**
     * A legacy source's operator chain exists: under causal logging, what its function emits is
     * counted and its watermarks gated ({@link LegacySourceOutput}), and a recovering source passes
     * its predecessor's checkpoints at their places.
     */
    public <T> void legacySourceCreated(StreamSource<T, ?> operator, OperatorChain<?, ?> chain) {
        if (causal == null) {
            return;
        }
        ClonosLegacySourcePatch.wrapOutput(
                operator, output -> new LegacySourceOutput<>(output, causal));
        sourceChainCreated(chain);
    }

    /**
     * Whether a legacy source must not start its function yet: while its recovery waits for its
     * consumers, the task's default action is suspended until the recovery moves on ({@code
     * mailbox} resumes it). Once it may start, it passes what its predecessor had before the first
     * element, and a watch fails the task if its replay stalls (its function, on a thread of its
     * own, may never emit the element a logged action waits for).
     */
    public boolean holdsBackLegacySource(
            MailboxDefaultAction.Controller controller, MailboxExecutor mailbox) {
        if (causal == null) {
            return false;
        }
        causal.processingStarted();
        CausalRecovery recovery = causal.recovery();
        recovery.checkDeadline();
        CompletableFuture<Void> changed = recovery.changed();
        if (recovery.isWaiting()) {
            MailboxDefaultAction.Suspension suspension = controller.suspendDefaultAction();
            changed.thenRun(() -> mailbox.execute(suspension::resume, "recovery moved on"));
            return true;
        }
        causal.fireDueTimers();
        watchReplay(mailbox);
        return false;
    }

    private void watchReplay(MailboxExecutor mailbox) {
        CausalRecovery recovery = causal.recovery();
        if (!recovery.isReplaying()) {
            return;
        }
        recovery.changed()
                .thenRun(
                        () ->
                                mailbox.execute(
                                        () -> {
                                            recovery.checkDeadline();
                                            watchReplay(mailbox);
                                        },
                                        "watch the replay"));
    }

    /** Whether causal logging is on for this task. */
    public boolean isCausal() {
        return causal != null;
    }

    /** The task's causal log and recovery; null without causal logging. */
    @Nullable
    CausalTask causalTask() {
        return causal;
    }

    /**
     * Whether a source may take a checkpoint now. Not while it recovers, nor while an output still
     * regenerates its predecessor's stream: the barrier would land among records its consumers
     * already have, or that a recovering consumer's replay reads before any new barrier, and their
     * checkpoint would not match its own. The checkpoint is declined; a later one is taken.
     */
    public boolean sourceAcceptsCheckpoint() {
        if (causal == null) {
            return true;
        }
        return causal.recovery().isRunning() && !regeneratesPredecessorStream();
    }

    /** Whether an output of the task still regenerates its predecessor's stream for a consumer. */
    private boolean regeneratesPredecessorStream() {
        return partitions.stream()
                .anyMatch(network.subpartitionLogs()::regeneratesPredecessorStream);
    }

    /**
     * A source's chain exists: a replay can announce its outputs idle, and a recovering source
     * passes the checkpoints its predecessor took at the logged places again, each as what its
     * chain did before the barrier and the barrier (on whichever thread emits the source's
     * records): the checkpoint was aborted with the failure, so no snapshot, and no acknowledgement
     * to a source coordinator, which never heard of the checkpoint for this attempt and fails the
     * job on one.
     */
    public void sourceChainCreated(OperatorChain<?, ?> chain) {
        if (causal == null) {
            return;
        }
        restoresOutputStatus(chain);
        causal.setCheckpointReplayer(
                checkpoint ->
                        passReplayedCheckpoint(
                                chain, checkpoint.checkpointId(), checkpoint.timestamp()));
    }

    /**
     * Passes a checkpoint its predecessor took, while the task replays: what the chain's operators
     * did before the barrier (a Beam operator finishes its bundle), reading what they read then,
     * and the barrier; then the epoch starts.
     */
    void passReplayedCheckpoint(OperatorChain<?, ?> chain, long checkpointId, long timestamp) {
        try {
            chain.prepareSnapshotPreBarrier(checkpointId);
            chain.broadcastEvent(
                    new CheckpointBarrier(
                            checkpointId,
                            timestamp,
                            CheckpointOptions.forCheckpointWithDefaultLocation()));
            startEpoch(checkpointId);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new FlinkRuntimeException(
                    "The replay of checkpoint " + checkpointId + " failed", e);
        }
    }

    /**
     * Flink triggers checkpoint {@code checkpointId} at the task (a source, or a task whose inputs
     * finished), and {@code trigger} takes it. Its barrier is pending from now on, so that outputs
     * whose full in-flight logs hold the task back let it through ({@link PendingBarriers}).
     */
    public CompletableFuture<Boolean> triggerCheckpoint(
            long checkpointId, Supplier<CompletableFuture<Boolean>> trigger) {
        return pendingBarriers == null
                ? trigger.get()
                : pendingBarriers.triggering(checkpointId, trigger);
    }

    /**
     * A source task takes a checkpoint under causal logging: the barrier's place among the records
     * is a determinant, so it is logged and the checkpoint taken in one mail ({@code mailbox}),
     * with no record slipping in between. Declined while the source may not take one ({@link
     * #sourceAcceptsCheckpoint}); {@code beforeBarrier} runs first (a reader emits what it holds).
     * {@code takeCheckpoint} gets metrics of no alignment: a source has no input to align. It
     * starts the epoch once the checkpoint is taken ({@link #startEpoch}): a source task at once, a
     * task with chained sources once its network inputs are aligned too.
     */
    public CompletableFuture<Boolean> triggerSourceCheckpoint(
            MailboxExecutor mailbox,
            BooleanSupplier taskRunning,
            CheckpointMetaData checkpoint,
            ThrowingRunnable<Exception> beforeBarrier,
            ThrowingConsumer<CheckpointMetricsBuilder, Exception> takeCheckpoint) {
        CompletableFuture<Boolean> triggered = new CompletableFuture<>();
        mailbox.execute(
                () -> {
                    if (!taskRunning.getAsBoolean() || !sourceAcceptsCheckpoint()) {
                        triggered.complete(false);
                        return;
                    }
                    try {
                        beforeBarrier.run();
                        if (causal != null) {
                            causal.sourceCheckpoint(
                                    checkpoint.getCheckpointId(), checkpoint.getTimestamp());
                        }
                        takeCheckpoint.accept(
                                new CheckpointMetricsBuilder()
                                        .setAlignmentDurationNanos(0L)
                                        .setBytesProcessedDuringAlignment(0L)
                                        .setCheckpointStartDelayNanos(0L));
                        triggered.complete(true);
                    } catch (Exception e) {
                        triggered.completeExceptionally(e);
                        throw e;
                    }
                },
                "checkpoint %s (Clonos)",
                checkpoint);
        return triggered;
    }

    /**
     * The task took checkpoint {@code checkpointId}: it enters that epoch. Only once the
     * checkpoint's synchronous part is done: what its operators do for it (before the barrier, and
     * in their snapshots) is in the checkpoint's state, so their determinants go with the epoch it
     * ends. A task restored from the checkpoint never does those things again; one that replays
     * through it does them again, reading them there.
     */
    public void startEpoch(long checkpointId) {
        epochs.startEpoch(checkpointId);
        aborts.entered(checkpointId);
        if (causal != null) {
            causal.epochStarted(checkpointId);
        }
    }

    /** Checkpoint {@code checkpointId} completed: no consumer will need what was sent before it. */
    public void checkpointCompleted(long checkpointId) {
        for (ResultPartitionID partition : partitions) {
            network.subpartitionLogs().truncateBefore(partition, checkpointId);
        }
        if (causal != null) {
            causal.log().truncateBefore(checkpointId);
            causal.held().truncateBefore(checkpointId);
            for (ClonosInputGate gate : gates) {
                gate.checkpointCompleted(checkpointId);
            }
            causal.checkpointCompleted(checkpointId);
        }
    }

    /**
     * Checkpoint {@code checkpointId} was aborted: a task waiting for it to free determinant memory
     * stops waiting; an alignment of it is cancelled (logged by its gate). The latest completed
     * checkpoint is no completion to truncate at: the task may need the output of its epoch.
     * Flink's task hears of the abort past the checkpoint ({@link HeldAborts}).
     */
    public Future<Void> checkpointAborted(
            long checkpointId,
            long latestCompletedCheckpointId,
            HeldAborts.Flink abort,
            HeldAborts.FlinkCompletion completion) {
        if (causal == null) {
            return abort.abort(checkpointId, latestCompletedCheckpointId);
        }
        causal.checkpointAborted(checkpointId);
        gates.forEach(gate -> gate.checkpointAborted(checkpointId));
        return aborts.aborted(checkpointId, latestCompletedCheckpointId, abort, completion);
    }

    public long currentEpoch() {
        return epochs.currentEpoch();
    }
}
