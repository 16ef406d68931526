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

import io.clonos.runtime.minicluster.ProbeRecords;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Properties;

/**
 * Writes the {@code clonos.determinantBytes} metric of every task that ends on an embedded cluster,
 * through Flink's metric reporters: the overhead benchmark's count of the determinant bytes a run
 * logged. A task's figure is read when its metrics are removed, i.e. when it ends. Flink
 * instantiates reporters itself; the configuration names the directory the figures go to, which the
 * benchmark reads once the cluster is closed.
 */
@Internal
public final class DeterminantBytesReporter implements MetricReporter {

    private static final String NAME = "clonos-determinant-bytes";
    private static final String DIRECTORY = "directory";
    private static final String KIND = "determinant-bytes";

    @Nullable private ProbeRecords.Writer figures;

    /** Sets an embedded cluster's configuration up to report to this reporter, into {@code dir}. */
    static void configure(Configuration config, Path dir) {
        config.setString("metrics.reporter." + NAME + ".factory.class", Factory.class.getName());
        config.setString("metrics.reporter." + NAME + "." + DIRECTORY, dir.toString());
    }

    /** The determinant bytes of every task that ended on a cluster configured with {@code dir}. */
    static long endedTasksBytes(Path dir) throws IOException {
        return ProbeRecords.read(dir, KIND, 1).stream().mapToLong(row -> row[0]).sum();
    }

    @Override
    public synchronized void open(MetricConfig config) {
        String dir = config.getString(DIRECTORY, null);
        if (dir == null) {
            throw new IllegalArgumentException(
                    "metrics.reporter." + NAME + "." + DIRECTORY + " is not set");
        }
        try {
            figures = ProbeRecords.create(dir, KIND, 1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public synchronized void close() {
        if (figures != null) {
            try {
                figures.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            figures = null;
        }
    }

    @Override
    public void notifyOfAddedMetric(Metric metric, String metricName, MetricGroup group) {}

    @Override
    public synchronized void notifyOfRemovedMetric(
            Metric metric, String metricName, MetricGroup group) {
        if (figures != null
                && "determinantBytes".equals(metricName)
                && metric instanceof Gauge
                && ((Gauge<?>) metric).getValue() instanceof Long) {
            try {
                figures.write((Long) ((Gauge<?>) metric).getValue());
                // one row per ended task: written through, whenever Flink closes the reporter
                figures.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
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
