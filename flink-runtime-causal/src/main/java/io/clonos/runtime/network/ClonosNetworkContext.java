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

package io.clonos.runtime.network;

import io.clonos.runtime.causal.RecoveryDeadlines;
import io.clonos.runtime.configuration.ClonosOptions;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.runtime.io.network.partition.ClonosPartitionPatch;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionManager;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.taskmanager.ClonosTaskGatesPatch;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the Clonos parts of one TaskManager share: the causal sides of its producing tasks, its
 * in-flight logs, its input gates and the partitions of attempts that start afresh. Created and
 * closed by the TaskManager's {@link ClonosShuffleEnvironment}, the way Flink's shuffle environment
 * owns its partition manager and task event dispatcher, so that TaskManagers sharing a JVM (every
 * embedded cluster) share nothing.
 *
 * <p>A task finds the context through what its TaskManager's network made for it: its input gates
 * and its result partitions ({@link #of}).
 */
@Internal
public final class ClonosNetworkContext {

    private final SubpartitionLogs subpartitionLogs = new SubpartitionLogs();
    private final CausalTaskRegistry causalTasks = new CausalTaskRegistry(subpartitionLogs);
    private final ClonosInputGateRegistry inputGates = new ClonosInputGateRegistry();
    private final ConsumerConnections consumerConnections = new ConsumerConnections();
    private final RecoveryDeadlines deadlines;

    /** Partitions deployed here whose producing attempt starts afresh, until its task asks. */
    private final Set<ResultPartitionID> freshPartitions = ConcurrentHashMap.newKeySet();

    /** Partitions deployed here whose job does not checkpoint: they have no in-flight log. */
    private final Set<ResultPartitionID> unloggedPartitions = ConcurrentHashMap.newKeySet();

    /** How long this TaskManager's channels and recovering tasks wait for a silent peer. */
    private final Duration reconnectTimeout;

    /** A context with the default reconnect timeout. */
    public ClonosNetworkContext(String owner) {
        this(owner, ClonosOptions.RECOVERY_RECONNECT_TIMEOUT.defaultValue());
    }

    /**
     * @param owner names the TaskManager, for the names of its threads
     * @param reconnectTimeout the TaskManager's {@code clonos.recovery.reconnect-timeout}
     */
    public ClonosNetworkContext(String owner, Duration reconnectTimeout) {
        this.deadlines = new RecoveryDeadlines(owner);
        this.reconnectTimeout = reconnectTimeout;
    }

    /**
     * The TaskManager's {@code clonos.recovery.reconnect-timeout}, the one deadline of its channels
     * and of its recovering tasks for a peer that never answers.
     */
    public Duration reconnectTimeout() {
        return reconnectTimeout;
    }

    /** What wakes this TaskManager's recovering tasks when a deadline passes. */
    public RecoveryDeadlines deadlines() {
        return deadlines;
    }

    public CausalTaskRegistry causalTasks() {
        return causalTasks;
    }

    public SubpartitionLogs subpartitionLogs() {
        return subpartitionLogs;
    }

    public ConsumerConnections consumerConnections() {
        return consumerConnections;
    }

    ClonosInputGateRegistry inputGates() {
        return inputGates;
    }

    /** A partition deployed to this TaskManager belongs to an attempt that starts afresh. */
    void partitionStartsFresh(ResultPartitionID partition) {
        freshPartitions.add(partition);
    }

    /** Whether the task writing {@code partitions} starts afresh; forgets them. */
    public boolean startsFresh(Collection<ResultPartitionID> partitions) {
        boolean fresh = false;
        for (ResultPartitionID partition : partitions) {
            fresh |= freshPartitions.remove(partition);
        }
        return fresh;
    }

    /** A partition deployed to this TaskManager belongs to a job that does not checkpoint. */
    void partitionUnlogged(ResultPartitionID partition) {
        unloggedPartitions.add(partition);
    }

    /** Whether {@code partition} has no in-flight log ({@link #partitionUnlogged}). */
    boolean isUnlogged(ResultPartitionID partition) {
        return unloggedPartitions.contains(partition);
    }

    /** The partition is released: it is forgotten. */
    void partitionReleased(ResultPartitionID partition) {
        unloggedPartitions.remove(partition);
    }

    /** The TaskManager's network closes: what is left of its tasks is forgotten. */
    void close() {
        freshPartitions.clear();
        unloggedPartitions.clear();
        causalTasks.clear();
        subpartitionLogs.clear();
        inputGates.clear();
        consumerConnections.clear();
        deadlines.close();
    }

    /**
     * The context of the TaskManager whose network made a task's gates and partitions (as Flink
     * hands them to the task); empty for a task with neither, and where the TaskManager does not
     * run Clonos's shuffle service.
     */
    public static Optional<ClonosNetworkContext> of(
            IndexedInputGate[] gates, ResultPartitionWriter[] writers) {
        for (ClonosInputGate gate : clonosGates(gates)) {
            return Optional.of(gate.context());
        }
        for (ResultPartitionWriter writer : writers) {
            ResultPartitionManager manager = ClonosPartitionPatch.partitionManagerOf(writer);
            if (manager instanceof ClonosResultPartitionManager) {
                return Optional.of(((ClonosResultPartitionManager) manager).context());
            }
        }
        return Optional.empty();
    }

    /** A task's Clonos input gates, in gate index order, from the gates Flink hands the task. */
    public static List<ClonosInputGate> clonosGates(IndexedInputGate[] gates) {
        List<ClonosInputGate> clonos = new ArrayList<>(gates.length);
        for (IndexedInputGate gate : gates) {
            IndexedInputGate unwrapped = ClonosTaskGatesPatch.unwrap(gate);
            if (unwrapped instanceof ClonosInputGate) {
                clonos.add((ClonosInputGate) unwrapped);
            }
        }
        return clonos;
    }
}
