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

import static org.assertj.core.api.Assertions.assertThat;

class PendingCheckpointTest {

    @Test
    void aCheckpointTakenIsPendingUntilItsOutcomeIsHeard() {
        PendingCheckpoint checkpoint = new PendingCheckpoint(5);
        assertThat(checkpoint.isPending()).as("restored from 5").isFalse();

        checkpoint.taken(6);
        assertThat(checkpoint.isPending()).isTrue();
        checkpoint.completed(6);
        assertThat(checkpoint.isPending()).isFalse();

        checkpoint.taken(7);
        checkpoint.aborted(7);
        assertThat(checkpoint.isPending()).isFalse();

        checkpoint.taken(8);
        checkpoint.completed(7);
        assertThat(checkpoint.isPending()).as("an older outcome leaves 8 pending").isTrue();
    }

    @Test
    void aReplacementCountsACheckpointAsPendingOnlyOnceItHeardOfOne() {
        PendingCheckpoint checkpoint = new PendingCheckpoint(5);
        checkpoint.replacedAFailedAttempt();

        checkpoint.taken(6);
        assertThat(checkpoint.isPending())
                .as("6 may have been triggered before the attempt ran: nobody tells it of its end")
                .isFalse();

        checkpoint.aborted(6);
        checkpoint.taken(7);
        assertThat(checkpoint.isPending())
                .as("7 is newer than a checkpoint that counted it")
                .isTrue();
    }
}
