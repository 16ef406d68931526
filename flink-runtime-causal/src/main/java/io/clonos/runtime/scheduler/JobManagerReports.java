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

package io.clonos.runtime.scheduler;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.jobgraph.tasks.TaskOperatorEventGateway;
import org.apache.flink.runtime.operators.coordination.CoordinationRequest;
import org.apache.flink.util.SerializedValue;

import org.slf4j.Logger;

import java.io.IOException;

/**
 * How a task's reports reach the JobManager's scheduler: as coordination requests addressed to
 * {@link FailTaskRequest#TARGET}, which {@link ClonosRequests} answers. A report that cannot be
 * sent or is not answered is only logged: each has a slower fallback (heartbeats for a lost peer,
 * the pause's limit for a replay's end).
 */
@Internal
final class JobManagerReports {

    private JobManagerReports() {}

    static void send(
            TaskOperatorEventGateway jobManager,
            CoordinationRequest report,
            Logger log,
            String what) {
        try {
            jobManager
                    .sendRequestToCoordinator(FailTaskRequest.TARGET, new SerializedValue<>(report))
                    .whenComplete(
                            (answer, failure) -> {
                                if (failure != null) {
                                    log.debug("{} could not be reported", what, failure);
                                }
                            });
        } catch (IOException e) {
            log.debug("{} could not be reported", what, e);
        }
    }
}
