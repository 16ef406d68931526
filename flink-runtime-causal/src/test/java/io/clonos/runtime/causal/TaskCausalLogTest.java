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

package io.clonos.runtime.causal;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** A task's own causal log as its consumer connections read it. */
class TaskCausalLogTest {

    private static final CausalLogId ID = CausalLogId.main("v", 1);

    @Test
    void eachReaderGetsEveryByteOnceAcrossEpochs() throws Exception {
        Random random = new Random(3);
        TaskCausalLog log = new TaskCausalLog(ID, 4);
        TaskCausalLog.Position reader = new TaskCausalLog.Position();
        CausalLog received = new CausalLog();
        List<Determinant> written = new ArrayList<>();
        java.util.Map<Long, List<Determinant>> perEpoch = new java.util.TreeMap<>();
        long epoch = 4;
        for (int i = 0; i < 2_000; i++) {
            int action = random.nextInt(10);
            if (action == 0) {
                log.startEpoch(++epoch);
            } else if (action < 3) {
                for (CausalLogDelta delta : log.deltasSince(reader)) {
                    assertThat(received.merge(delta))
                            .as("a delta carries only new bytes")
                            .isEqualTo(delta.bytes().length);
                }
                assertThat(log.hasNewSince(reader)).isFalse();
            } else {
                // wall-clock readings are encoded as differences within an epoch
                Determinant d =
                        action < 6
                                ? new Determinant.Timestamp(
                                        1_795_000_000_000L + i + random.nextInt(3))
                                : new Determinant.Order(
                                        random.nextInt(8),
                                        random.nextInt(3) * random.nextInt(40_000));
                log.append(d);
                written.add(d);
                perEpoch.computeIfAbsent(epoch, e -> new ArrayList<>()).add(d);
            }
        }
        log.deltasSince(reader)
                .forEach(
                        delta -> {
                            try {
                                received.merge(delta);
                            } catch (CorruptCausalLogException e) {
                                throw new AssertionError(e);
                            }
                        });
        List<Determinant> read = new ArrayList<>();
        for (long e = 4; e <= epoch; e++) {
            read.addAll(received.determinants(ID, e));
        }
        assertThat(read).isEqualTo(written);
        assertThat(log.totalBytes())
                .isEqualTo(
                        perEpoch.values().stream()
                                .mapToLong(d -> DeterminantEncoding.encode(d).length)
                                .sum());
    }

    @Test
    void aReaderBehindTheTruncationStartsAtTheOldestEpochKept() {
        TaskCausalLog log = new TaskCausalLog(ID, 1);
        log.append(new Determinant.Timestamp(1));
        TaskCausalLog.Position reader = new TaskCausalLog.Position();
        log.startEpoch(2);
        log.append(new Determinant.Timestamp(2));
        log.startEpoch(3);
        log.append(new Determinant.Timestamp(3));
        log.truncateBefore(3);

        List<CausalLogDelta> deltas = log.deltasSince(reader);
        assertThat(deltas).extracting(CausalLogDelta::epoch).containsExactly(3L);
        assertThat(deltas.get(0).offset()).isZero();
    }
}
