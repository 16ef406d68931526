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

package io.clonos.streaming.tasks;

import io.clonos.runtime.causal.CausalRecovery;
import io.clonos.runtime.protocol.FreshStartRequest;
import io.clonos.runtime.protocol.LostTaskManagerReport;
import io.clonos.runtime.protocol.ReplayEndReport;
import io.clonos.runtime.protocol.SchedulerEndpoint;
import io.clonos.runtime.protocol.TaskReport;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.jobgraph.tasks.TaskOperatorEventGateway;
import org.apache.flink.runtime.operators.coordination.CoordinationResponse;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;
import org.apache.flink.util.SerializedValue;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * How a task sends its {@link TaskReport}s to the JobManager's scheduler: as operator events to
 * {@link SchedulerEndpoint#OPERATOR_ID}, over the task's own gateway, so that Flink names the
 * sending attempt. Any thread.
 */
@Internal
final class JobManagerReports {

    private static final Logger LOG = LoggerFactory.getLogger(JobManagerReports.class);

    private final TaskOperatorEventGateway jobManager;
    private final String taskName;

    JobManagerReports(TaskOperatorEventGateway jobManager, String taskName) {
        this.jobManager = jobManager;
        this.taskName = taskName;
    }

    /**
     * What the task calls when its connection to a producer's TaskManager broke, with the
     * producer's data address: one report per address (a TaskManager's loss breaks the connection
     * of every channel it fed).
     */
    Consumer<InetSocketAddress> lostProducers() {
        return oncePerAddress(a -> new LostTaskManagerReport(hostOf(a), a.getPort()));
    }

    /**
     * What the task calls when the connection of a consumer of its output broke, with the
     * connection's remote address (the consumer's host and a port of the consumer's own): one
     * report naming the host per connection.
     */
    Consumer<InetSocketAddress> lostConsumers() {
        return oncePerAddress(a -> LostTaskManagerReport.ofConsumerHost(hostOf(a)));
    }

    /**
     * A restarted attempt whose JobManager holds checkpoints back for its replay reports once its
     * {@code recovery} runs normally, at once if it replays nothing (null: the task has no causal
     * log).
     */
    void replayEndOnceRunning(@Nullable CausalRecovery recovery) {
        Runnable send = () -> send(new ReplayEndReport(), "the end of its replay");
        if (recovery == null) {
            send.run();
        } else {
            recovery.whenRunning(send);
        }
    }

    private Consumer<InetSocketAddress> oncePerAddress(
            Function<InetSocketAddress, LostTaskManagerReport> report) {
        Set<InetSocketAddress> reported = ConcurrentHashMap.newKeySet();
        return address -> {
            if (reported.add(address)) {
                send(report.apply(address), "its broken connection to " + address);
            }
        };
    }

    private static String hostOf(InetSocketAddress address) {
        return address.getAddress() != null
                ? address.getAddress().getHostAddress()
                : address.getHostString();
    }

    /**
     * Asks the JobManager whether {@code attempt} starts afresh ({@link FreshStartRequest}), for a
     * task without output partitions, whose deployment cannot carry the mark. Without an answer
     * within {@code timeout} the task takes itself for recovering: a replay that does not fit its
     * input fails into a global rollback, which then marks it.
     */
    boolean startsFresh(ExecutionAttemptID attempt, Duration timeout) {
        try {
            CoordinationResponse response =
                    jobManager
                            .sendRequestToCoordinator(
                                    SchedulerEndpoint.OPERATOR_ID,
                                    new SerializedValue<>(new FreshStartRequest(attempt)))
                            .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return response instanceof FreshStartRequest.Response answer && answer.startsFresh();
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            LOG.warn(
                    "{}: the JobManager did not say whether the task starts afresh; it recovers by its determinants.",
                    taskName,
                    e);
            return false;
        }
    }

    private void send(TaskReport report, String what) {
        try {
            jobManager.sendOperatorEventToCoordinator(
                    SchedulerEndpoint.OPERATOR_ID, new SerializedValue<OperatorEvent>(report));
        } catch (IOException e) {
            LOG.debug("{} could not report {}", taskName, what, e);
        }
    }
}
