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

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.runtime.operators.coordination.CoordinationRequest;
import org.apache.flink.runtime.operators.coordination.CoordinationResponse;

/**
 * Asks the JobManager to fail one running task, for failure experiments ({@code bin/clonos fail}).
 * It travels over Flink's REST API for coordination requests, addressed to {@link
 * SchedulerEndpoint#OPERATOR_ID}, and is refused unless the cluster allows failure injection
 * ({@code clonos.fault-injection.enabled}).
 */
@PublicEvolving
public final class FailTaskRequest implements CoordinationRequest {

    private static final long serialVersionUID = 1L;

    private final String vertex;
    private final int subtask;

    /**
     * @param vertex the name of the job vertex, or of one of the operators chained in it
     * @param subtask the subtask index, from 0
     */
    public FailTaskRequest(String vertex, int subtask) {
        this.vertex = vertex;
        this.subtask = subtask;
    }

    public String getVertex() {
        return vertex;
    }

    public int getSubtask() {
        return subtask;
    }

    /** What the JobManager did. */
    public static final class Response implements CoordinationResponse {
        private static final long serialVersionUID = 1L;

        private final String message;

        public Response(String message) {
            this.message = message;
        }

        public String getMessage() {
            return message;
        }
    }
}
