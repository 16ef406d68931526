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

package io.clonos.cli;

import io.clonos.runtime.protocol.FailTaskRequest;
import io.clonos.runtime.protocol.SchedulerEndpoint;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.client.deployment.StandaloneClusterId;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;

import java.util.concurrent.TimeUnit;

/**
 * {@code bin/clonos fail}: fails one running task through the JobManager, which then recovers it as
 * it recovers any failed task. Uses Flink's REST API for coordination requests.
 */
@Internal
final class TaskFailer {

    private TaskFailer() {}

    static String fail(Configuration clusterConfig, String jobId, String vertex, int subtask)
            throws Exception {
        try (RestClusterClient<StandaloneClusterId> client =
                new RestClusterClient<>(clusterConfig, StandaloneClusterId.getInstance())) {
            FailTaskRequest.Response response =
                    (FailTaskRequest.Response)
                            client.sendCoordinationRequest(
                                            JobID.fromHexString(jobId),
                                            SchedulerEndpoint.OPERATOR_ID,
                                            new FailTaskRequest(vertex, subtask))
                                    .get(1, TimeUnit.MINUTES);
            return response.getMessage();
        }
    }
}
