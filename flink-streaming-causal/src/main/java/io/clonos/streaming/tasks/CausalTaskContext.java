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
import io.clonos.runtime.causal.DeterminantSharing;
import io.clonos.runtime.causal.HeldCausalLogs;
import io.clonos.runtime.causal.TaskCausalLog;
import io.clonos.runtime.configuration.TaskSettings;
import io.clonos.runtime.jobgraph.VertexReplay;
import io.clonos.runtime.network.ClonosInputGate;
import io.clonos.runtime.network.ClonosNetworkContext;
import io.clonos.runtime.network.OrderInProgress;
import io.clonos.runtime.network.PendingBarriers;
import io.clonos.runtime.network.SubpartitionLogMetrics;
import io.clonos.runtime.shuffle.ClonosShuffleServiceFactory;
import io.clonos.streaming.causal.CausalTimers;
import io.clonos.streaming.partitioner.CausalPartitioners;

import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.io.network.api.writer.RecordWriterDelegate;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.runtime.io.ClonosNetworkInputPatch;
import org.apache.flink.streaming.runtime.io.StreamInputProcessor;
import org.apache.flink.streaming.runtime.tasks.ClonosOutputStatusPatch;
import org.apache.flink.streaming.runtime.tasks.OperatorChain;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeServiceFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.function.Consumer;
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
    private final JobManagerReports reports;
    private final CausalSourceContext sources;
    private final TaskSettings settings;

    /** The Clonos context of the TaskManager that runs the task. */
    private final ClonosNetworkContext network;

    /** Null if the job takes no checkpoints: then a full in-memory log never holds it back. */
    @Nullable private final PendingBarriers pendingBarriers;

    private final List<ClonosInputGate> gates;
    private final List<ResultPartitionID> partitions = new ArrayList<>();

    private CausalTaskContext(Environment environment) {
        this.environment = environment;
        this.settings = TaskSettings.readFrom(environment.getTaskConfiguration());
        long restored =
                environment
                        .getTaskStateManager()
                        .getRestoreCheckpointId()
                        .orElse(ClonosInputGate.NOT_RESTORED);
        this.epochs = EpochTracker.startingAt(restored);
        this.aborts = new HeldAborts(epochs);
        this.network = ClonosShuffleServiceFactory.networkOf(environment);
        this.gates = ClonosNetworkContext.clonosGates(environment.getAllInputGates());
        this.reports =
                new JobManagerReports(
                        environment.getOperatorCoordinatorEventGateway(),
                        environment.getTaskInfo().getTaskNameWithSubtasks());
        Consumer<InetSocketAddress> lostPeers = reports.lostProducers();
        for (ClonosInputGate gate : gates) {
            gate.setRestoredCheckpointId(restored);
            gate.setLostPeerReporter(lostPeers);
        }
        MetricGroup group = environment.getMetricGroup().addGroup(EpochTracker.METRIC_GROUP);
        ResultPartitionWriter[] writers = environment.getAllWriters();
        Consumer<InetSocketAddress> lostConsumers = reports.lostConsumers();
        Map<String, SubpartitionLogMetrics> logMetrics = new LinkedHashMap<>();
        for (int w = 0; w < writers.length; w++) {
            partitions.add(writers[w].getPartitionId());
            network.consumerConnections().register(writers[w].getPartitionId(), lostConsumers);
            for (int i = 0; i < writers[w].getNumberOfSubpartitions(); i++) {
                logMetrics.put(
                        w + "_" + i,
                        network.subpartitionLogs().metrics(writers[w].getPartitionId(), i));
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
        if (partitions.isEmpty()
                && environment.getTaskInfo().getAttemptNumber() > 0
                && VertexReplay.determinantsHeldBySink(environment.getTaskConfiguration())) {
            // a sink whose determinants are in an external system: no partition carries its mark
            fresh = reports.startsFresh(environment.getExecutionId(), network.reconnectTimeout());
        }
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
        this.sources =
                new CausalSourceContext(
                        causal, this::regeneratesPredecessorStream, this::startEpoch);
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
        if (!settings.causalLogging()) {
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
        // a sink that stores the task's determinants beside its output answers like a consumer
        boolean heldBySink =
                VertexReplay.determinantsHeldBySink(environment.getTaskConfiguration());
        int networkConsumers = consumers;
        if (heldBySink) {
            consumers++;
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
        long granularity = settings.timeServiceGranularity().toMillis();
        DeterminantMemory memory = new DeterminantMemory(settings.determinantMemory().getBytes());
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(id, restored, memory),
                        new HeldCausalLogs(memory),
                        recovery,
                        channels,
                        granularity,
                        DeterminantSharing.of(
                                settings.determinantSharingDepth(),
                                settings.determinantSharingHops()));
        task.setFailureHandler(environment::failExternally);
        if (heldBySink) {
            task.setExternalHolder(networkConsumers);
        }
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
        LOG.info(
                "{}: causal logging on (DSD {}, {}), recovery {}.",
                taskName,
                settings.determinantSharingDepth(),
                settings.determinantSharingHops(),
                recovery.state());
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
        if (environment.getTaskInfo().getAttemptNumber() > 0
                && settings.checkpointsWaitForReplays()) {
            reports.replayEndOnceRunning(causal == null ? null : causal.recovery());
        }
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
            restoresOutputStatus(causal, chain);
        }
    }

    /** A replay can tell the chain's outputs that its predecessor's had announced idleness. */
    static void restoresOutputStatus(CausalTask causal, OperatorChain<?, ?> chain) {
        causal.watermarks().setIdleOutputs(() -> ClonosOutputStatusPatch.announceIdle(chain));
    }

    /**
     * Whether a replay is partway through a logged network read (a producer that recovered too cut
     * its buffers elsewhere): until its last bytes are handed out, no source chained to the task
     * may emit, although the next determinant is the source's.
     */
    public boolean replaysNetworkRead() {
        return networkRead != null && networkRead.isOpen();
    }

    /** What the task adds to its sources': the task's own, or those chained to it. */
    public CausalSourceContext sources() {
        return sources;
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

    /** Whether an output of the task still regenerates its predecessor's stream for a consumer. */
    private boolean regeneratesPredecessorStream() {
        return partitions.stream()
                .anyMatch(network.subpartitionLogs()::regeneratesPredecessorStream);
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
