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

package io.clonos.jmh;

import io.clonos.runtime.configuration.ClonosOptions.SpillPolicy;
import io.clonos.runtime.inflightlog.InFlightLog;
import io.clonos.runtime.inflightlog.InFlightLogMemory;
import io.clonos.runtime.inflightlog.InMemoryInFlightLog;
import io.clonos.runtime.inflightlog.SpillingInFlightLog;

import org.apache.flink.runtime.io.network.buffer.Buffer;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * What a producer pays per buffer it sends for keeping it in its in-flight log: the in-memory log,
 * and the spillable log under each spill policy, with 64 MB of log memory (the default) and an
 * epoch of 64 buffers of 32 KB (a checkpoint every 2 MB of output), truncated as its checkpoint
 * completes. Spill files go to the system's temporary directory.
 */
public class InFlightLogAppendBenchmark extends PerRecordBenchmark {

    static final int BUFFER_BYTES = 32 * 1024;
    static final int BUFFERS_PER_EPOCH = 64;

    @Param({"in-memory", "eager", "epoch", "availability"})
    public String log;

    InFlightLog inFlightLog;
    private Buffer buffer;
    private Path directory;
    private long epoch;
    private int appended;

    @Setup
    public void setUp() throws IOException {
        epoch = 1;
        InFlightLogMemory memory = new InFlightLogMemory(64L << 20);
        if (log.equals("in-memory")) {
            inFlightLog = new InMemoryInFlightLog(epoch, memory);
        } else {
            directory = Files.createTempDirectory("clonos-jmh-inflight-");
            inFlightLog =
                    new SpillingInFlightLog(
                            "benchmark",
                            epoch,
                            memory,
                            SpillPolicy.valueOf(log.toUpperCase(Locale.ROOT)),
                            0.3,
                            4,
                            directory);
        }
        buffer = filledBuffer(BUFFER_BYTES);
    }

    @Benchmark
    public long appendOneBuffer() {
        inFlightLog.append(buffer);
        if (++appended == BUFFERS_PER_EPOCH) {
            appended = 0;
            inFlightLog.startEpoch(++epoch);
            inFlightLog.truncateBefore(epoch);
        }
        return inFlightLog.sizeInBytes();
    }

    /** The spill directory if it still exists after the tear-down; null otherwise. */
    Path spillDirectory() {
        return directory != null && Files.exists(directory) ? directory : null;
    }

    @TearDown
    public void tearDown() throws IOException {
        inFlightLog.close();
        buffer.recycleBuffer();
        // the spillable log deletes its files, and its directory with them, when it closes
        if (directory != null && Files.exists(directory)) {
            try (Stream<Path> files = Files.walk(directory)) {
                files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }
}
