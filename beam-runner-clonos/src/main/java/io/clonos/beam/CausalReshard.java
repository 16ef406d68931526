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

package io.clonos.beam;

import io.clonos.streaming.causal.CausalServices;

import org.apache.flink.annotation.Internal;

import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TimestampedValue;

/**
 * The shard step of Beam's exactly-once Kafka sink, made replayable. Beam's own draws the first
 * shard of each worker from {@code ThreadLocalRandom} when the function is set up and then goes
 * round the shards; a recovered worker draws another first shard, keeps no count in any checkpoint,
 * and so sends its records to other shards than its predecessor did: its output differs from what
 * its consumers received, and the recovery falls back to a global rollback. This one draws each
 * record's shard from the task's causal random numbers, seeded and logged once per epoch, which a
 * recovered task draws again in the same order. The records spread over the shards as evenly.
 */
@Internal
final class CausalReshard<T> extends DoFn<T, KV<Integer, TimestampedValue<T>>> {

    private static final long serialVersionUID = 1L;

    private final int shards;

    private transient CausalServices causal;

    CausalReshard(int shards) {
        if (shards <= 0) {
            throw new IllegalArgumentException("A sink needs at least one shard, not " + shards);
        }
        this.shards = shards;
    }

    int shards() {
        return shards;
    }

    @ProcessElement
    public void processElement(ProcessContext context) {
        if (causal == null) {
            // where the function runs: the task's thread
            causal = CausalServices.ofTaskThread();
        }
        context.output(
                KV.of(
                        causal.random().nextInt(shards),
                        TimestampedValue.of(context.element(), context.timestamp())));
    }
}
