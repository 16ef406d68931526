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
import org.joda.time.Instant;

/**
 * Stamps each record of a Kafka read that stamps with the wall clock ({@code KafkaIO}'s default,
 * processing time) with the time of the task's causal clock, read as the record leaves the source
 * ({@link EmissionStampedReader} leaves it unstamped). Beam's Kafka reader reads the wall clock
 * when it reads a record; a recovered reader reads its records ahead of the log and holds them
 * until their turn, so a time read there is never the one its predecessor read. Read here, after
 * the source has emitted the record in the order the task's log holds, the time is a determinant
 * like any other clock reading and a recovered task gets the same one. The time is that of the
 * record's emission rather than of its read, a difference of the source's hand-over.
 */
@Internal
final class CausalProcessingTime<T> extends DoFn<T, T> {

    private static final long serialVersionUID = 1L;

    private transient CausalServices causal;

    @ProcessElement
    public void processElement(@Element T element, OutputReceiver<T> out) {
        if (causal == null) {
            // where the function runs: the task's thread
            causal = CausalServices.ofTaskThread();
        }
        out.outputWithTimestamp(element, new Instant(causal.currentTimeMillis()));
    }
}
