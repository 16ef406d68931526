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

package io.clonos.runtime.standby;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.checkpoint.TaskStateSnapshot;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.operators.coordination.CoordinationRequest;
import org.apache.flink.runtime.operators.coordination.CoordinationResponse;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;

import javax.annotation.Nullable;

/**
 * What a standby task and the JobManager's scheduler tell each other. The standby asks, through
 * Flink's coordination requests (which the scheduler answers itself), for its primary's state once
 * a checkpoint completes, and reports the copies it holds; the scheduler tells it to finish when
 * its primary finished, through an operator event.
 */
@Internal
public final class StandbyMessages {

    private StandbyMessages() {}

    /**
     * The JobManager gives a running standby attempt its secret, which the standby's requests
     * carry. A standby's requests reach the JobManager by the path REST clients' coordination
     * requests take, which cannot tell them apart; an operator event reaches the one task only.
     */
    public record Credentials(String secret) implements OperatorEvent {
        private static final long serialVersionUID = 1L;
    }

    /**
     * A standby asks for the state its primary subtask had in the latest completed checkpoint, if
     * that is {@code completedCheckpointId} or later (it holds the ones before).
     */
    public record StateRequest(
            JobVertexID standbyVertex,
            int standbySubtask,
            long completedCheckpointId,
            String secret)
            implements CoordinationRequest {
        private static final long serialVersionUID = 1L;
    }

    /**
     * The primary's state in checkpoint {@code checkpointId}; {@code state} is null when there is
     * none to hold (no checkpoint yet, or the primary finished: {@code finish} says the standby may
     * end).
     */
    public record StateResponse(
            long checkpointId, @Nullable TaskStateSnapshot state, boolean finish)
            implements CoordinationResponse {
        private static final long serialVersionUID = 1L;
    }

    /**
     * A standby holds local copies of its primary's files of checkpoint {@code checkpointId}; which
     * of its attempts holds them, the secret says.
     */
    public record Fetched(
            JobVertexID standbyVertex,
            int standbySubtask,
            long checkpointId,
            LocalCopies copies,
            String secret)
            implements CoordinationRequest {
        private static final long serialVersionUID = 1L;
    }

    /**
     * The scheduler's answer to {@link Fetched}: whether the standby may delete the copies of older
     * checkpoints (not while a replacement may restore from them).
     */
    public record Noted(boolean mayDropOlderCopies) implements CoordinationResponse {
        private static final long serialVersionUID = 1L;
    }

    /** The primary finished: the standby ends. */
    public record Finish() implements OperatorEvent {
        private static final long serialVersionUID = 1L;
    }
}
