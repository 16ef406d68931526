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

import io.clonos.runtime.network.ClonosInputGate;
import io.clonos.runtime.network.ClonosInputGates;
import io.clonos.runtime.network.SubpartitionLogMetrics;
import io.clonos.runtime.network.SubpartitionLogs;

import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.streaming.runtime.io.ClonosDeserializerReset;
import org.apache.flink.streaming.runtime.io.StreamInputProcessor;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * What a Clonos stream task adds to Flink's: its epoch, its input gates told where it was restored
 * from, its in-flight logs truncated when a checkpoint completes, and the {@code clonos} metrics.
 * Every Clonos task class holds one, so the protocol lives here once, whatever Flink task class
 * the Clonos task extends.
 */
@Internal
public final class CausalTaskContext {

    private final EpochTracker epochs;
    private final List<ClonosInputGate> gates;
    private final List<ResultPartitionID> partitions = new ArrayList<>();
    private final List<SubpartitionLogMetrics> logMetrics = new ArrayList<>();

    private CausalTaskContext(Environment environment) {
        long restored = environment.getTaskStateManager().getRestoreCheckpointId().orElse(ClonosInputGate.NOT_RESTORED);
        this.epochs = EpochTracker.startingAt(restored);
        this.gates = ClonosInputGates.of(environment.getExecutionId());
        for (ClonosInputGate gate : gates) {
            gate.setRestoredCheckpointId(restored);
        }
        MetricGroup group = environment.getMetricGroup().addGroup(EpochTracker.METRIC_GROUP);
        ResultPartitionWriter[] writers = environment.getAllWriters();
        for (int w = 0; w < writers.length; w++) {
            partitions.add(writers[w].getPartitionId());
            for (int i = 0; i < writers[w].getNumberOfSubpartitions(); i++) {
                SubpartitionLogMetrics metrics = SubpartitionLogs.metrics(writers[w].getPartitionId(), i);
                logMetrics.add(metrics);
                MetricGroup subpartition = group.addGroup("inFlightLog").addGroup(w + "_" + i);
                subpartition.gauge("bytes", (Gauge<Long>) metrics::bytes);
                subpartition.gauge("buffers", (Gauge<Long>) metrics::buffers);
            }
        }
        registerMetrics(group);
    }

    public static CausalTaskContext create(Environment environment) {
        return new CausalTaskContext(environment);
    }

    private void registerMetrics(MetricGroup group) {
        group.gauge(EpochTracker.EPOCH_METRIC, (Gauge<Long>) epochs::currentEpoch);
        group.gauge("inFlightLogBytes", (Gauge<Long>) () -> sum(SubpartitionLogMetrics::bytes));
        group.gauge("inFlightLogBuffers", (Gauge<Long>) () -> sum(SubpartitionLogMetrics::buffers));
        group.gauge("replayedBuffers", (Gauge<Long>) () -> sum(SubpartitionLogMetrics::replayedBuffers));
    }

    private long sum(ToLongFunction<SubpartitionLogMetrics> figure) {
        return logMetrics.stream().mapToLong(figure).sum();
    }

    /**
     * Called once the task's input processor exists: a channel whose producer died has its partial
     * record dropped before the restarted producer's data arrives.
     */
    public void inputProcessorCreated(StreamInputProcessor processor) {
        if (processor == null) {
            return;
        }
        for (ClonosInputGate gate : gates) {
            int gateIndex = gate.getGateIndex();
            gate.setChannelResetListener(channel -> ClonosDeserializerReset.reset(processor, new InputChannelInfo(gateIndex, channel)));
        }
    }

    /** The task starts checkpoint {@code checkpointId}: it enters that epoch. */
    public void startEpoch(long checkpointId) {
        epochs.startEpoch(checkpointId);
    }

    /** Checkpoint {@code checkpointId} completed: no consumer will need what was sent before it. */
    public void checkpointCompleted(long checkpointId) {
        for (ResultPartitionID partition : partitions) {
            SubpartitionLogs.truncateBefore(partition, checkpointId);
        }
    }

    public long currentEpoch() {
        return epochs.currentEpoch();
    }
}
