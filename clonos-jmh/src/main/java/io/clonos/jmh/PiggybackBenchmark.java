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

import io.clonos.runtime.causal.CausalLog;
import io.clonos.runtime.causal.CausalLogDelta;
import io.clonos.runtime.causal.CausalLogId;
import io.clonos.runtime.causal.CorruptCausalLogException;
import io.clonos.runtime.causal.Determinant;
import io.clonos.runtime.causal.TaskCausalLog;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

import java.util.List;

/**
 * What piggybacking costs per buffer a task sends: the producer takes the determinants logged since
 * the last buffer to this consumer as deltas and serializes them onto the wire; the consumer
 * deserializes them and merges them into the causal log it holds for the producer. {@code
 * determinantsPerBuffer} is how many determinants the producer logged while filling the buffer
 * (about one per record for order and split determinants).
 */
public class PiggybackBenchmark extends PerRecordBenchmark {

    @Param({"1", "16", "128"})
    public int determinantsPerBuffer;

    TaskCausalLog producer;
    CausalLog consumer;
    private TaskCausalLog.Position position;
    private long epoch;
    private int buffers;
    private long records;

    @Setup
    public void setUp() {
        epoch = 1;
        producer = new TaskCausalLog(CausalLogId.main("producer", 0), epoch);
        consumer = new CausalLog();
        position = new TaskCausalLog.Position();
    }

    /** One buffer's deltas, from the producer's log to the consumer's copy of it. */
    @Benchmark
    public int piggybackOneBuffer() throws CorruptCausalLogException {
        for (int i = 0; i < determinantsPerBuffer; i++) {
            producer.append(new Determinant.Order((int) (records++ & 1), 32 * 1024));
        }
        int merged = 0;
        List<CausalLogDelta> deltas = producer.deltasSince(position);
        for (CausalLogDelta delta : deltas) {
            byte[] wire = delta.serialize();
            merged += consumer.merge(CausalLogDelta.deserialize(wire));
        }
        if (++buffers == DeterminantLogBenchmark.EPOCH_LENGTH / 64) {
            // a checkpoint completed: both sides drop what came before it
            buffers = 0;
            producer.startEpoch(++epoch);
            producer.truncateBefore(epoch);
            consumer.truncateBefore(epoch);
        }
        return merged;
    }
}
