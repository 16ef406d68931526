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

package io.clonos.runtime.protocol;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.operators.coordination.CoordinationRequest;
import org.apache.flink.runtime.operators.coordination.CoordinationResponse;

/**
 * A task attempt asks the JobManager whether it starts afresh. Tasks with output partitions learn
 * it from their partitions' descriptors; a task without any (a sink) has no descriptor of its own
 * that could carry the mark, and asks when it needs to know: a sink that stores its task's
 * determinants in an external system must not replay them when Flink restarted every task.
 */
@Internal
public final class FreshStartRequest implements CoordinationRequest {

    private static final long serialVersionUID = 1L;

    private final ExecutionAttemptID attempt;

    public FreshStartRequest(ExecutionAttemptID attempt) {
        this.attempt = attempt;
    }

    public ExecutionAttemptID attempt() {
        return attempt;
    }

    /** Whether the attempt starts afresh. */
    public record Response(boolean startsFresh) implements CoordinationResponse {
        private static final long serialVersionUID = 1L;
    }
}
