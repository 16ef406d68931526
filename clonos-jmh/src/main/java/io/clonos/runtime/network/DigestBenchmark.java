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

import io.clonos.jmh.PerRecordBenchmark;

import org.apache.flink.runtime.io.network.buffer.Buffer;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What a consumer pays per buffer it receives for the digest that lets a recovered producer check
 * the output it regenerates ({@link EpochBytes}: a byte count and a CRC32C per epoch). In the
 * network package, since the digest is internal to it.
 */
public class DigestBenchmark extends PerRecordBenchmark {

    @Param({"4096", "32768"})
    public int bufferBytes;

    EpochBytes epoch;
    private Buffer buffer;

    @Setup
    public void setUp() {
        epoch = new EpochBytes();
        buffer = filledBuffer(bufferBytes);
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
