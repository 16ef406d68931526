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

package org.apache.flink.runtime.checkpoint;

import org.apache.flink.runtime.execution.ExecutionState;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A checkpoint plan may count a task as finished only if it finished: a failed or cancelled attempt
 * waits for its local restart, and a checkpoint that recorded it as finished would restart it
 * finished, without its state.
 */
class ClonosCheckpointPlanPatchTest {

    @Test
    void aFinishedTaskCountsAsFinished() {
        assertThatCode(
                        () ->
                                ClonosCheckpointPlanPatch.requireFinished(
                                        ExecutionState.FINISHED, "t"))
                .doesNotThrowAnyException();
    }

    @Test
    void aFailedOrCancelledTaskRefusesTheCheckpoint() {
        for (ExecutionState state :
                new ExecutionState[] {ExecutionState.FAILED, ExecutionState.CANCELED}) {
            assertThatThrownBy(
                            () -> ClonosCheckpointPlanPatch.requireFinished(state, "map (1/1)#0"))
                    .isInstanceOf(CompletionException.class)
                    .cause()
                    .isInstanceOf(CheckpointException.class)
                    .hasMessageContaining("map (1/1)#0 is " + state)
                    .satisfies(
                            e ->
                                    assertThat(
                                                    ((CheckpointException) e)
                                                            .getCheckpointFailureReason())
                                            .isEqualTo(
                                                    CheckpointFailureReason
                                                            .NOT_ALL_REQUIRED_TASKS_RUNNING));
        }
    }
}
