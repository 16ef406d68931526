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
import org.apache.flink.runtime.operators.coordination.CoordinationResponse;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * A task tells the JobManager that its connection to another TaskManager broke. Clonos consumers
 * outlive a producer's loss (they wait for its new attempt), so unlike Flink's tasks they do not
 * fail when a connection breaks, and without this report the JobManager would learn of a dead
 * TaskManager only from missed heartbeats. A consumer names its producer's TaskManager by its data
 * port; a producer, whose consumer connected from a port of its own, knows only the consumer's host
 * ({@link #knowsDataPort()}), which matters where a TaskManager runs consumers only (a sink's
 * slot): nobody reads from it, so no consumer would report it. Addressed to {@link
 * FailTaskRequest#TARGET}; the scheduler checks the report before it acts on it ({@link
 * LostTaskManagers}).
 */
@Internal
public final class LostTaskManagerReport implements CoordinationRequest {

    private static final long serialVersionUID = 1L;

    private static final Logger LOG = LoggerFactory.getLogger(LostTaskManagerReport.class);

    /** The data port of a report that does not know it: the peer was a consumer. */
    static final int UNKNOWN_DATA_PORT = -1;

    private final String host;
    private final int dataPort;
    private final String reporter;

    public LostTaskManagerReport(String host, int dataPort, String reporter) {
        this.host = host;
        this.dataPort = dataPort;
        this.reporter = reporter;
    }

    /** A producer's connection to a consumer on {@code host} broke. */
    public static LostTaskManagerReport ofConsumerHost(String host, String reporter) {
        return new LostTaskManagerReport(host, UNKNOWN_DATA_PORT, reporter);
    }

    /** The host of the TaskManager whose data connection broke. */
    public String host() {
        return host;
    }

    /** The data port of the TaskManager whose data connection broke, if {@link #knowsDataPort}. */
    public int dataPort() {
        return dataPort;
    }

    /**
     * Whether the report names the TaskManager's data port; if not, every TaskManager of the job on
     * {@link #host} is a suspect.
     */
    public boolean knowsDataPort() {
        return dataPort != UNKNOWN_DATA_PORT;
    }

    /** The task that reports. */
    public String reporter() {
        return reporter;
    }

    /**
     * What the task {@code taskName} calls when a connection to another TaskManager's data port
     * broke: sends a report to the JobManager, once per address (a TaskManager loss breaks the
     * connection of every channel it fed). Any thread.
     */
    public static Consumer<InetSocketAddress> reporter(
            TaskOperatorEventGateway jobManager, String taskName) {
        return reporter(
                jobManager,
                taskName,
                (host, address) -> new LostTaskManagerReport(host, address.getPort(), taskName));
    }

    /**
     * What the task {@code taskName} calls when the connection of a consumer of its output broke,
     * with the connection's remote address (the consumer's host and a port of the consumer's own):
     * sends a report naming the host, once per connection. Any thread.
     */
    public static Consumer<InetSocketAddress> consumerReporter(
            TaskOperatorEventGateway jobManager, String taskName) {
        return reporter(jobManager, taskName, (host, address) -> ofConsumerHost(host, taskName));
    }

    private static Consumer<InetSocketAddress> reporter(
            TaskOperatorEventGateway jobManager,
            String taskName,
            BiFunction<String, InetSocketAddress, LostTaskManagerReport> report) {
        Set<InetSocketAddress> reported = ConcurrentHashMap.newKeySet();
        return address -> {
            if (!reported.add(address)) {
                return;
            }
            String host =
                    address.getAddress() != null
                            ? address.getAddress().getHostAddress()
                            : address.getHostString();
            JobManagerReports.send(
                    jobManager,
                    report.apply(host, address),
                    LOG,
                    taskName + "'s broken connection to " + address);
        };
    }

    /** What the JobManager made of a report. */
    public static final class Response implements CoordinationResponse {
        private static final long serialVersionUID = 1L;

        private final String verdict;

        public Response(String verdict) {
            this.verdict = verdict;
        }

        public String verdict() {
            return verdict;
        }
    }
}
