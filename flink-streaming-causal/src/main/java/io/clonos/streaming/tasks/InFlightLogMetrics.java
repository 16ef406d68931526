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

import io.clonos.runtime.network.SubpartitionLogMetrics;

import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MeterView;
import org.apache.flink.metrics.MetricGroup;

import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * A task's figures of its epochs and of its outputs' in-flight logs: per subpartition, and summed
 * over its outputs.
 */
final class InFlightLogMetrics {

    private InFlightLogMetrics() {}

    /**
     * @param subpartitions each output subpartition's figures by its name, {@code <writer>_<index>}
     */
    static void register(
            MetricGroup group,
            EpochTracker epochs,
            Map<String, SubpartitionLogMetrics> subpartitions) {
        subpartitions.forEach(
                (name, metrics) -> {
                    MetricGroup subpartition = group.addGroup("inFlightLog").addGroup(name);
                    subpartition.gauge("bytes", (Gauge<Long>) metrics::bytes);
                    subpartition.gauge("buffers", (Gauge<Long>) metrics::buffers);
                });
        ToLongFunction<ToLongFunction<SubpartitionLogMetrics>> sum =
                figure -> subpartitions.values().stream().mapToLong(figure).sum();
        group.gauge(EpochTracker.EPOCH_METRIC, (Gauge<Long>) epochs::currentEpoch);
        group.gauge(
                "inFlightLogBytes",
                (Gauge<Long>) () -> sum.applyAsLong(SubpartitionLogMetrics::bytes));
        group.gauge(
                "inFlightLogBuffers",
                (Gauge<Long>) () -> sum.applyAsLong(SubpartitionLogMetrics::buffers));
        group.gauge(
                "inFlightLogBytesOnDisk",
                (Gauge<Long>) () -> sum.applyAsLong(SubpartitionLogMetrics::bytesOnDisk));
        group.meter(
                "inFlightLogSpilledBytesPerSecond",
                new MeterView(
                        new ReadOnlyCounter(
                                () -> sum.applyAsLong(SubpartitionLogMetrics::spilledBytes))));
        group.meter(
                "inFlightLogReadBytesPerSecond",
                new MeterView(
                        new ReadOnlyCounter(
                                () -> sum.applyAsLong(SubpartitionLogMetrics::readBytes))));
        group.gauge(
                "inFlightLogHeldBackMillis",
                (Gauge<Long>) () -> sum.applyAsLong(SubpartitionLogMetrics::heldBackMillis));
        group.gauge(
                "replayedBuffers",
                (Gauge<Long>) () -> sum.applyAsLong(SubpartitionLogMetrics::replayedBuffers));
    }
}
