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

package io.clonos.bench.probe;

import io.clonos.runtime.causal.DeterminantEncoding;
import io.clonos.streaming.tasks.CausalTaskMetrics;

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
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Writes the {@code clonos.determinantBytes} metric of every task that ends on an embedded cluster,
 * through Flink's metric reporters: the overhead benchmark's count of the determinant bytes a run
 * logged, in all and per kind of determinant. A task's figure is read when its metrics are removed,
 * i.e. when it ends. Flink instantiates reporters itself; the configuration names the directory the
 * figures go to, which the benchmark reads once the cluster is closed.
 */
@Internal
public final class DeterminantBytesReporter implements MetricReporter {

    private static final String NAME = "clonos-determinant-bytes";
    private static final String DIRECTORY = "directory";
    private static final String KIND = "determinant-bytes";
    private static final String BY_KIND = "determinant-bytes-by-kind";

    @Nullable private ProbeRecords.Writer figures;

    /** Rows of (index in {@link DeterminantEncoding#KINDS}, bytes) per ended task. */
    @Nullable private ProbeRecords.Writer figuresByKind;

    /** Sets an embedded cluster's configuration up to report to this reporter, into {@code dir}. */
    public static void configure(Configuration config, Path dir) {
        config.setString("metrics.reporter." + NAME + ".factory.class", Factory.class.getName());
        config.setString("metrics.reporter." + NAME + "." + DIRECTORY, dir.toString());
    }

    /**
     * The determinant bytes of every task that ended on a cluster configured with {@code dir}, per
     * kind of determinant (kinds without bytes left out).
     */
    public static Map<String, Long> endedTasksBytesByKind(Path dir) throws IOException {
        Map<String, Long> bytes = new TreeMap<>();
        for (long[] row : ProbeRecords.read(dir, BY_KIND, 2)) {
            if (row[1] > 0) {
                bytes.merge(DeterminantEncoding.KINDS.get((int) row[0]), row[1], Long::sum);
            }
        }
        return bytes;
    }

    /** The determinant bytes of every task that ended on a cluster configured with {@code dir}. */
    public static long endedTasksBytes(Path dir) throws IOException {
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
            figuresByKind = ProbeRecords.create(dir, BY_KIND, 2);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public synchronized void close() {
        if (figures != null) {
            try {
                figures.close();
                figuresByKind.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            figures = null;
            figuresByKind = null;
        }
    }

    @Override
    public void notifyOfAddedMetric(Metric metric, String metricName, MetricGroup group) {}

    @Override
    public synchronized void notifyOfRemovedMetric(
            Metric metric, String metricName, MetricGroup group) {
        if (figures == null
                || !(metric instanceof Gauge)
                || !(((Gauge<?>) metric).getValue() instanceof Long)) {
            return;
        }
        long value = (Long) ((Gauge<?>) metric).getValue();
        int kind = DeterminantEncoding.KINDS.indexOf(metricName);
        try {
            // one row per ended task: written through, whenever Flink closes the reporter
            if (CausalTaskMetrics.DETERMINANT_BYTES.equals(metricName)) {
                figures.write(value);
                figures.flush();
            } else if (kind >= 0
                    && group.getMetricIdentifier(metricName)
                            .contains("." + CausalTaskMetrics.DETERMINANT_BYTES_BY_KIND + ".")) {
                figuresByKind.write(kind, value);
                figuresByKind.flush();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
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
