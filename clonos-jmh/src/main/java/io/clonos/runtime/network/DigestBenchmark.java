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

package io.clonos.runtime.network;

import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.buffer.FreeingBufferRecycler;
import org.apache.flink.runtime.io.network.buffer.NetworkBuffer;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * What a consumer pays per buffer it receives for the digest that lets a recovered producer check
 * the output it regenerates ({@link EpochBytes}: a byte count and a CRC32C per epoch). In the
 * network package, since the digest is internal to it.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class DigestBenchmark {

    @Param({"4096", "32768"})
    public int bufferBytes;

    EpochBytes epoch;
    private Buffer buffer;

    @Setup
    public void setUp() {
        epoch = new EpochBytes();
        NetworkBuffer filled =
                new NetworkBuffer(
                        MemorySegmentFactory.allocateUnpooledSegment(bufferBytes),
                        FreeingBufferRecycler.INSTANCE);
        for (int i = 0; i < bufferBytes; i++) {
            filled.writeByte(i * 31);
        }
        buffer = filled;
    }

    @Benchmark
    public long digestOneBuffer() {
        epoch.add(buffer);
        return epoch.checksum();
    }

    /** Bytes digested so far. */
    public long digestedBytes() {
        return epoch.bytes();
    }

    @TearDown
    public void tearDown() {
        buffer.recycleBuffer();
    }
}
