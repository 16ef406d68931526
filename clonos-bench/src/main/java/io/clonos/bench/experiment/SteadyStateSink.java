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

import io.clonos.bench.stats.LatencyHistogram;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.streaming.api.functions.sink.RichSinkFunction;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

/**
 * The overhead benchmark's sink: after a warm-up of its own, counts what it receives and its
 * latencies in a {@link LatencyHistogram}, and writes them when it closes. Constant memory,
 * whatever the run's length. A failure-free benchmark only: an attempt that fails loses its
 * figures.
 */
final class SteadyStateSink extends RichSinkFunction<Tuple3<Long, Long, Long>> {

    private static final long serialVersionUID = 1L;

    static final String PREFIX = "steady-";

    private final String probes;
    private final long warmupMillis;

    private transient LatencyHistogram latencies;
    private transient long steadyFrom;
    private transient long first;
    private transient long last;

    SteadyStateSink(String probes, long warmupMillis) {
        this.probes = probes;
        this.warmupMillis = warmupMillis;
    }

    @Override
    public void open(OpenContext context) {
        latencies = new LatencyHistogram();
        steadyFrom = -1;
    }

    @Override
    public void invoke(Tuple3<Long, Long, Long> event, Context context) {
        long now = System.currentTimeMillis();
        if (steadyFrom < 0) {
            steadyFrom = now + warmupMillis;
        }
        if (now < steadyFrom) {
            return;
        }
        if (latencies.count() == 0) {
            first = now;
        }
        last = now;
        latencies.record(now - event.f2);
    }

    @Override
    public void close() throws IOException {
        if (latencies == null || latencies.count() == 0) {
            return;
        }
        String name =
                PREFIX
                        + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask()
                        + "-"
                        + getRuntimeContext().getTaskInfo().getAttemptNumber();
        Path directory = Paths.get(probes);
        latencies.write(directory.resolve(name + ".histogram"));
        Files.write(
                directory.resolve(name + ".window"),
                List.of(first + " " + last),
                StandardCharsets.UTF_8);
    }

    /** What every sink subtask received in its steady state. */
    record Steady(LatencyHistogram latencies, long first, long last) {

        double recordsPerSecond() {
            return latencies.count() * 1000.0 / Math.max(1, last - first);
        }

        static Steady read(Path probes) throws IOException {
            LatencyHistogram all = new LatencyHistogram();
            long first = Long.MAX_VALUE;
            long last = Long.MIN_VALUE;
            try (var files = Files.list(probes)) {
                for (Path file : files.toList()) {
                    String name = file.getFileName().toString();
                    if (name.startsWith(PREFIX) && name.endsWith(".histogram")) {
                        all.add(LatencyHistogram.read(file));
                        String[] window =
                                Files.readString(
                                                file.resolveSibling(
                                                        name.replace(".histogram", ".window")),
                                                StandardCharsets.UTF_8)
                                        .trim()
                                        .split(" ");
                        first = Math.min(first, Long.parseLong(window[0]));
                        last = Math.max(last, Long.parseLong(window[1]));
                    }
                }
            }
            if (all.count() == 0) {
                throw new IOException(
                        "No sink reached its steady state in "
                                + probes
                                + ": the run ended within its warm-up; give it more --records"
                                + " or fewer --warmup-seconds");
            }
            return new Steady(all, first, last);
        }
    }
}
