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

package io.clonos.bench.experiment;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;
import org.apache.flink.metrics.reporter.Scheduled;

import javax.annotation.Nullable;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Samples every task's in-flight log figures ({@code clonos.inFlightLogBytes}, {@code
 * clonos.inFlightLogBytesOnDisk}) on an embedded cluster once a second, through Flink's metric
 * reporters, into a CSV timeline: the memory the logs hold per task over time, which a budget per
 * TaskManager bounds only in sum. A vanilla Flink cluster has no such metrics: its file has the
 * header only.
 */
@Internal
public final class InFlightMemoryReporter implements MetricReporter, Scheduled {

    private static final String NAME = "clonos-in-flight-memory";
    private static final String FILE = "file";
    static final String HEADER = "elapsed_ms,task,memory_bytes,disk_bytes";

    /** A task's two gauges, by task name and subtask index. */
    private final Map<String, Gauge<?>[]> tasks = new ConcurrentHashMap<>();

    @Nullable private BufferedWriter timeline;
    private long started;

    /** Sets an embedded cluster's configuration up to sample into {@code file}. */
    static void configure(Configuration config, Path file) {
        config.setString("metrics.reporter." + NAME + ".factory.class", Factory.class.getName());
        config.setString("metrics.reporter." + NAME + "." + FILE, file.toString());
        config.setString("metrics.reporter." + NAME + ".interval", "1 SECONDS");
    }

    /**
     * The most memory and the most disk one task's logs held at a sample of {@code file}, in bytes:
     * {@code {memory, disk}}.
     */
    static long[] maxPerTask(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        long[] most = new long[2];
        for (String line : lines.subList(1, lines.size())) {
            String[] columns = line.split(",");
            most[0] = Math.max(most[0], Long.parseLong(columns[2]));
            most[1] = Math.max(most[1], Long.parseLong(columns[3]));
        }
        return most;
    }

    @Override
    public synchronized void open(MetricConfig config) {
        String file = config.getString(FILE, null);
        if (file == null) {
            throw new IllegalArgumentException(
                    "metrics.reporter." + NAME + "." + FILE + " is not set");
        }
        try {
            timeline = Files.newBufferedWriter(Path.of(file));
            timeline.write(HEADER);
            timeline.newLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        started = System.currentTimeMillis();
    }

    @Override
    public synchronized void close() {
        if (timeline != null) {
            try {
                timeline.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            timeline = null;
        }
    }

    @Override
    public void notifyOfAddedMetric(Metric metric, String metricName, MetricGroup group) {
        int slot =
                "inFlightLogBytes".equals(metricName)
                        ? 0
                        : "inFlightLogBytesOnDisk".equals(metricName) ? 1 : -1;
        if (slot < 0 || !(metric instanceof Gauge)) {
            return;
        }
        tasks.computeIfAbsent(taskOf(group), t -> new Gauge<?>[2])[slot] = (Gauge<?>) metric;
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String metricName, MetricGroup group) {
        if ("inFlightLogBytes".equals(metricName)) {
            tasks.remove(taskOf(group));
        }
    }

    /** A task's name with its subtask index, from the variables of its metric group. */
    private static String taskOf(MetricGroup group) {
        Map<String, String> variables = group.getAllVariables();
        return variables.get("<task_name>") + "[" + variables.get("<subtask_index>") + "]";
    }

    @Override
    public synchronized void report() {
        if (timeline == null) {
            return;
        }
        long elapsed = System.currentTimeMillis() - started;
        try {
            for (Map.Entry<String, Gauge<?>[]> task : tasks.entrySet()) {
                Gauge<?>[] gauges = task.getValue();
                long bytes = value(gauges[0]);
                long disk = value(gauges[1]);
                timeline.write(
                        elapsed
                                + ","
                                + task.getKey().replace(',', ' ')
                                + ","
                                + Math.max(0, bytes - disk)
                                + ","
                                + disk);
                timeline.newLine();
            }
            timeline.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long value(@Nullable Gauge<?> gauge) {
        Object value = gauge == null ? null : gauge.getValue();
        return value instanceof Number ? ((Number) value).longValue() : 0;
    }

    /** Flink builds reporters from a factory named in the configuration. */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            return new InFlightMemoryReporter();
        }
    }
}
