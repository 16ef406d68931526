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

import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Meter;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Keeps every task's {@code clonos.inFlightLogHeldBackMillis} gauge and {@code
 * clonos.inFlightLogSpilledBytesPerSecond} meter and every job's {@code
 * clonos.checkpointsHeldBackMillis} gauge of an embedded cluster, also after the task or job ended
 * (they read figures that outlive them), so that a test can tell whether full in-flight logs held
 * their producers back, how much the logs wrote to disk, and whether the JobManager held
 * checkpoints back for a replay.
 */
public final class InFlightLogFigures implements MetricReporterFactory {

    private static final String IN_FLIGHT_LOGS = "inFlightLogHeldBackMillis";
    private static final String CHECKPOINTS = "checkpointsHeldBackMillis";
    private static final String SPILLED = "inFlightLogSpilledBytesPerSecond";

    private static final List<Meter> SPILLED_METERS = new CopyOnWriteArrayList<>();

    private static final Map<String, List<Gauge<?>>> GAUGES =
            Map.of(
                    IN_FLIGHT_LOGS,
                    new CopyOnWriteArrayList<>(),
                    CHECKPOINTS,
                    new CopyOnWriteArrayList<>());

    /** The reporter to configure, as {@code metrics.reporter.<name>.factory.class}. */
    static final String FACTORY = InFlightLogFigures.class.getName();

    static void clear() {
        GAUGES.values().forEach(List::clear);
        SPILLED_METERS.clear();
    }

    /** The bytes the in-flight logs wrote to disk, in all. */
    static long spilledBytes() {
        return SPILLED_METERS.stream().mapToLong(Meter::getCount).sum();
    }

    /** How long the logs held their producers back, in all, in milliseconds. */
    static long heldBackMillis() {
        return sum(IN_FLIGHT_LOGS);
    }

    /** How long JobManagers held checkpoints back for replays, in all, in milliseconds. */
    static long checkpointsHeldBackMillis() {
        return sum(CHECKPOINTS);
    }

    private static long sum(String name) {
        return GAUGES.get(name).stream()
                .mapToLong(gauge -> ((Number) gauge.getValue()).longValue())
                .sum();
    }

    @Override
    public MetricReporter createMetricReporter(Properties properties) {
        return new MetricReporter() {
            @Override
            public void open(MetricConfig config) {}

            @Override
            public void close() {}

            @Override
            public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
                List<Gauge<?>> gauges = GAUGES.get(name);
                if (gauges != null && metric instanceof Gauge<?> gauge) {
                    gauges.add(gauge);
                }
                if (name.equals(SPILLED) && metric instanceof Meter meter) {
                    SPILLED_METERS.add(meter);
                }
            }

            @Override
            public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {}
        };
    }
}
