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

import io.clonos.runtime.configuration.ClonosOptions.SpillPolicy;
import io.clonos.runtime.inflightlog.InFlightLog;
import io.clonos.runtime.inflightlog.InFlightLogMemory;
import io.clonos.runtime.inflightlog.InMemoryInFlightLog;
import io.clonos.runtime.inflightlog.SpillingInFlightLog;

import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.buffer.FreeingBufferRecycler;
import org.apache.flink.runtime.io.network.buffer.NetworkBuffer;
import org.apache.flink.util.FileUtils;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * How fast an in-flight log takes buffers and gives them back to a replay, by storage: the heap
 * ({@code in-memory}) and each spill policy, the log memory a fraction of what is logged so that
 * the spilling logs write most of it. Buffers of Flink's network buffer size, an epoch every {@code
 * epochMegabytes}; repetitions alternate the order of the variants, medians and spread are printed.
 *
 * <p>What it cannot show: the files are read back right after they were written, mostly from the
 * operating system's page cache, so the replay figures of the spilling logs are those of a machine
 * whose page cache holds the log, not of a cold disk.
 */
public final class InFlightLogBenchmark {

    private static final int BUFFER_BYTES = 32 * 1024;

    private final PrintStream out;

    public InFlightLogBenchmark(PrintStream out) {
        this.out = out;
    }

    /** Runs every variant {@code repetitions} times; returns the medians in MB/s by variant. */
    public Map<String, double[]> run(
            int megabytes, int memoryMegabytes, int epochMegabytes, int prefetch, int repetitions)
            throws Exception {
        List<String> variants = new ArrayList<>(List.of("in-memory"));
        for (SpillPolicy policy : SpillPolicy.values()) {
            variants.add(policy.toString());
        }
        Map<String, List<double[]>> figures = new LinkedHashMap<>();
        variants.forEach(v -> figures.put(v, new ArrayList<>()));
        Path directory = Files.createTempDirectory("clonos-inflight-bench");
        try {
            for (int repetition = 0; repetition < repetitions; repetition++) {
                List<String> order = new ArrayList<>(variants);
                if (repetition % 2 == 1) {
                    Collections.reverse(order);
                }
                for (String variant : order) {
                    Path logDirectory = directory.resolve(variant + "-" + repetition);
                    InFlightLog log =
                            variant.equals("in-memory")
                                    ? new InMemoryInFlightLog(0, (long) (megabytes + 1) << 20)
                                    : new SpillingInFlightLog(
                                            variant,
                                            0,
                                            new InFlightLogMemory((long) memoryMegabytes << 20),
                                            SpillPolicy.valueOf(variant.toUpperCase()),
                                            0.3,
                                            prefetch,
                                            logDirectory);
                    double[] run = measure(log, megabytes, epochMegabytes);
                    figures.get(variant).add(run);
                    out.printf(
                            "repetition %d %-12s append %8.1f MB/s  replay %8.1f MB/s  on disk %5.1f%%%n",
                            repetition, variant, run[0], run[1], run[2]);
                    log.close();
                    FileUtils.deleteDirectoryQuietly(logDirectory.toFile());
                }
            }
        } finally {
            FileUtils.deleteDirectoryQuietly(directory.toFile());
        }
        out.printf(
                "%nmedian (min-max) of %d, %d MB logged in %d KB buffers, log memory %d MB, an epoch every %d MB, prefetch %d%n",
                repetitions,
                megabytes,
                BUFFER_BYTES / 1024,
                memoryMegabytes,
                epochMegabytes,
                prefetch);
        out.println("| log | append (MB/s) | replay (MB/s) |");
        out.println("|---|---|---|");
        Map<String, double[]> medians = new LinkedHashMap<>();
        figures.forEach(
                (variant, runs) -> {
                    double[] append = runs.stream().mapToDouble(r -> r[0]).sorted().toArray();
                    double[] replay = runs.stream().mapToDouble(r -> r[1]).sorted().toArray();
                    medians.put(variant, new double[] {median(append), median(replay)});
                    out.printf(
                            "| %s | %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) |%n",
                            variant,
                            median(append),
                            append[0],
                            append[append.length - 1],
                            median(replay),
                            replay[0],
                            replay[replay.length - 1]);
                });
        return medians;
    }

    /** Append and replay MB/s, and the percentage of the log on disk after the appends. */
    private static double[] measure(InFlightLog log, int megabytes, int epochMegabytes)
            throws Exception {
        byte[] bytes = new byte[BUFFER_BYTES];
        new Random(42).nextBytes(bytes);
        Buffer buffer =
                new NetworkBuffer(
                        MemorySegmentFactory.wrap(bytes),
                        FreeingBufferRecycler.INSTANCE,
                        Buffer.DataType.DATA_BUFFER,
                        BUFFER_BYTES);
        long buffers = ((long) megabytes << 20) / BUFFER_BYTES;
        long perEpoch = Math.max(1, ((long) epochMegabytes << 20) / BUFFER_BYTES);
        long start = System.nanoTime();
        for (long i = 0; i < buffers; i++) {
            if (i > 0 && i % perEpoch == 0) {
                log.startEpoch(log.currentEpoch() + 1);
            }
            log.append(buffer);
        }
        long appended = System.nanoTime();
        double onDisk = 100.0 * log.bytesOnDisk() / Math.max(1, log.sizeInBytes());
        InFlightLog.Cursor cursor = log.replay();
        long replayed = 0;
        for (Buffer next = cursor.next(); next != null; next = cursor.next()) {
            replayed += next.readableBytes();
            next.recycleBuffer();
        }
        long end = System.nanoTime();
        if (replayed != buffers * BUFFER_BYTES) {
            throw new IllegalStateException(
                    "replayed " + replayed + " bytes of " + buffers * BUFFER_BYTES);
        }
        double mb = (double) megabytes;
        return new double[] {
            mb / ((appended - start) / 1e9), mb / ((end - appended) / 1e9), onDisk
        };
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
