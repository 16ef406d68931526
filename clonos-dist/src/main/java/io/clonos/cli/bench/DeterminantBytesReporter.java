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

package io.clonos.cli.bench;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

import java.util.Properties;
import java.util.concurrent.atomic.LongAdder;

/**
 * Adds up the {@code clonos.determinantBytes} metric of every task that ends on an embedded
 * cluster, through Flink's metric reporters: the overhead benchmark's count of the determinant
 * bytes a run logged. A task's figure is read when its metrics are removed, i.e. when it ends.
 *
 * <p>The total is JVM-wide (the benchmark runs one embedded cluster at a time and reads the
 * difference around each run); Flink instantiates reporters itself, so nothing else could hand it
 * back.
 */
@Internal
public final class DeterminantBytesReporter implements MetricReporter {

    private static final LongAdder ENDED_TASKS_BYTES = new LongAdder();

    /** Sets an embedded cluster's configuration up to report to this reporter. */
    static void configure(Configuration config) {
        config.setString(
                "metrics.reporter.clonos-determinant-bytes.factory.class", Factory.class.getName());
    }

    /** The determinant bytes of every task that ended in this JVM so far. */
    static long endedTasksBytes() {
        return ENDED_TASKS_BYTES.sum();
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedMetric(Metric metric, String metricName, MetricGroup group) {}

    @Override
    public void notifyOfRemovedMetric(Metric metric, String metricName, MetricGroup group) {
        if ("determinantBytes".equals(metricName)
                && metric instanceof Gauge
                && ((Gauge<?>) metric).getValue() instanceof Long) {
            ENDED_TASKS_BYTES.add((Long) ((Gauge<?>) metric).getValue());
        }
    }

    /** Flink builds reporters from a factory named in the configuration. */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            return new DeterminantBytesReporter();
        }
    }
}
