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

import io.clonos.runtime.causal.CausalRecovery;
import io.clonos.runtime.configuration.ClonosOptions;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.jobgraph.tasks.TaskOperatorEventGateway;
import org.apache.flink.runtime.operators.coordination.CoordinationRequest;
import org.apache.flink.runtime.operators.coordination.CoordinationResponse;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

/**
 * A restarted task tells the JobManager that it replayed what its predecessor had done and now runs
 * normally, so that checkpoints held back for its replay may resume ({@link CheckpointPause}).
 * Addressed to {@link FailTaskRequest#TARGET}. A forged report can only end a pause early, which is
 * Flink's behaviour anyway: it names an attempt, and only the attempts the JobManager waits for
 * count.
 */
@Internal
public final class ReplayEndReport implements CoordinationRequest {

    private static final long serialVersionUID = 1L;

    private static final Logger LOG = LoggerFactory.getLogger(ReplayEndReport.class);

    private final ExecutionAttemptID attempt;

    public ReplayEndReport(ExecutionAttemptID attempt) {
        this.attempt = attempt;
    }

    public ExecutionAttemptID attempt() {
        return attempt;
    }

    /** The JobManager's acknowledgement; the task needs no answer. */
    public static final class Received implements CoordinationResponse {
        private static final long serialVersionUID = 1L;
    }

    /**
     * What a task calls as it starts processing: a restarted attempt of a job whose JobManager
     * holds checkpoints back for replays ({@code clonos.recovery.checkpoint-pause}, which the
     * rewriter puts into every task's configuration) reports once its {@code recovery} runs
     * normally, at once if it replays nothing (null: the task has no causal log). Any thread.
     */
    public static void sendOnceRunning(Environment task, @Nullable CausalRecovery recovery) {
        ExecutionAttemptID attempt = task.getExecutionId();
        if (attempt.getAttemptNumber() == 0
                || task.getTaskConfiguration()
                        .get(ClonosOptions.RECOVERY_CHECKPOINT_PAUSE)
                        .isZero()) {
            return;
        }
        TaskOperatorEventGateway jobManager = task.getOperatorCoordinatorEventGateway();
        Runnable send = () -> send(jobManager, attempt);
        if (recovery == null) {
            send.run();
        } else {
            recovery.whenRunning(send);
        }
    }

    private static void send(TaskOperatorEventGateway jobManager, ExecutionAttemptID attempt) {
        JobManagerReports.send(
                jobManager, new ReplayEndReport(attempt), LOG, "The replay's end of " + attempt);
    }
}
