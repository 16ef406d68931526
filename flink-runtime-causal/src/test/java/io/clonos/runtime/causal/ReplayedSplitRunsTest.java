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

import static io.clonos.runtime.causal.ReplayFixtures.LOG;
import static io.clonos.runtime.causal.ReplayFixtures.bytes;
import static io.clonos.runtime.causal.ReplayFixtures.running;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A source's records in runs per split: logged as runs wherever its consumers happened to read the
 * log, replayed record by record, and logged again by the recovered task byte for byte.
 */
class ReplayedSplitRunsTest {

    @Test
    void aRecoveredReaderTakesItsPredecessorsSplitsAndLogsTheSameBytes() throws Exception {
        Random random = new Random(5);
        TaskCausalLog predecessorLog = new TaskCausalLog(LOG, 5);
        CausalTask predecessor = running(predecessorLog, 1);
        TaskCausalLog.Position consumer = new TaskCausalLog.Position();
        List<String> splits = new ArrayList<>();
        for (int record = 0; record < 4_000; record++) {
            String split = "partition-" + (record / 300) % 4;
            splits.add(split);
            predecessor.beforeElement();
            predecessor.logged(new Determinant.SourceSplit(split));
            if (random.nextInt(40) == 0) {
                predecessorLog.deltasSince(consumer);
            }
        }
        byte[] logged = bytes(predecessorLog);
        assertThat(logged.length).isLessThan(4_000 / 5);

        CausalRecovery recovery = ReplayFixtures.replaying(predecessorLog);
        TaskCausalLog recoveredLog = new TaskCausalLog(LOG, 5);
        CausalTask recovered = new CausalTask(recoveredLog, recovery, 1, 1, -1);
        recovered.processingStarted();
        TaskCausalLog.Position recoveredConsumer = new TaskCausalLog.Position();
        for (String split : splits) {
            recovered.beforeElement();
            Determinant.SourceSplit due = recovery.peek(Determinant.SourceSplit.class);
            assertThat(due.splitId()).isEqualTo(split);
            recovered.decide(Determinant.SourceSplit.class, () -> due);
            if (random.nextInt(3) == 0) {
                recoveredLog.deltasSince(recoveredConsumer);
            }
        }
        assertThat(recovery.isRunning()).isTrue();
        assertThat(bytes(recoveredLog)).isEqualTo(logged);
    }

    @Test
    void aRecordOfAnotherKindWithinARunIsADivergence() {
        CausalRecovery recovery =
                ReplayFixtures.replaying(
                        new Determinant.SourceSplit("p"),
                        new Determinant.SourceSplit(0, "p", 3),
                        new Determinant.Timestamp(9, 100));
        CausalTask task = new CausalTask(new TaskCausalLog(LOG, 5), recovery, 1, 1, -1);
        task.processingStarted();
        task.decide(Determinant.SourceSplit.class, () -> null);
        task.decide(Determinant.SourceSplit.class, () -> null);

        assertThatThrownBy(() -> task.decide(Determinant.Timestamp.class, () -> null))
                .isInstanceOf(LocalRecoveryImpossibleException.class)
                .hasMessageContaining("where its predecessor logged SourceSplit");
    }
}
