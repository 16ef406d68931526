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
import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.ExecutionGraph;
import org.apache.flink.runtime.executiongraph.ExecutionVertex;
import org.apache.flink.runtime.jobmaster.JobMasterException;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.runtime.scheduler.strategy.SchedulingTopology;
import org.apache.flink.runtime.taskmanager.TaskManagerLocation;

import org.slf4j.Logger;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Declares a TaskManager lost as soon as a task reports its data connection to it broken and the
 * JobManager finds its data port refusing connections, instead of after missed heartbeats. The
 * rule: a process that runs keeps its data port open, so a refused connection means the process is
 * gone (killed, crashed, out of memory); a TaskManager that is slow, or that the JobManager cannot
 * reach (a timeout, a network partition), is left to Flink's heartbeats, so one report never takes
 * down a TaskManager that lives. Declared lost, the TaskManager's slots are released in the job's
 * slot pool (its tasks fail, and recover locally) and the ResourceManager forgets it (its slots are
 * not offered again). A TaskManager that registers again under the same id (a Kubernetes
 * StatefulSet's pod keeps its name, and the chart makes it the resource id) is probed anew when a
 * connection to its new address breaks; a late report of the old address, which attempts that have
 * not been reset yet still name, changes nothing, so that it cannot take down the new incarnation.
 * JobManager main thread, but the probe.
 */
@Internal
final class LostTaskManagers {

    /** How long the probe of a reported TaskManager's data port waits for an answer. */
    static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);

    private final Executor io;
    private final Executor mainThread;
    private final BiConsumer<ResourceID, Exception> declareLost;
    private final Predicate<ResourceID> registered;
    private final Logger log;

    /** TaskManagers being probed. */
    private final Set<ResourceID> probing = new HashSet<>();

    /** TaskManagers declared lost, and the data port that refused. */
    private final Map<ResourceID, TaskManagerLocation> declared = new HashMap<>();

    LostTaskManagers(
            Executor io,
            Executor mainThread,
            BiConsumer<ResourceID, Exception> declareLost,
            Predicate<ResourceID> registered,
            Logger log) {
        this.io = io;
        this.mainThread = mainThread;
        this.declareLost = declareLost;
        this.registered = registered;
        this.log = log;
    }

    /**
     * Whether the TaskManager left the job: declared lost (by a report, its heartbeats or its RPC
     * endpoint) and released. Main thread.
     */
    boolean isGone(ResourceID taskManager) {
        return !registered.test(taskManager);
    }

    /**
     * For a task, a producer of its that finished on a TaskManager that is gone and cannot restart
     * finished on restore ({@link FinishedProducers}): a finished task's partition and in-flight
     * log live on its TaskManager only. Main thread.
     */
    Function<ExecutionVertexID, Optional<ExecutionVertexID>> finishedProducers(
            ExecutionGraph graph, SchedulingTopology topology, FinishedProducers restartable) {
        return id -> {
            for (ExecutionVertexID producer : RestartScope.producersOf(topology, id)) {
                ExecutionVertex vertex = RestartScope.vertexOf(graph, producer);
                TaskManagerLocation location = vertex.getCurrentAssignedResourceLocation();
                if (vertex.getExecutionState() == ExecutionState.FINISHED
                        && !restartable.restartsFinished(producer)
                        && location != null
                        && isGone(location.getResourceID())) {
                    return Optional.of(producer);
                }
            }
            return Optional.empty();
        };
    }

    /** A task reports its connection to a TaskManager's data port broken. */
    LostTaskManagerReport.Response reported(LostTaskManagerReport report, ExecutionGraph graph) {
        TaskManagerLocation location = locationOf(report, graph);
        if (location == null) {
            return new LostTaskManagerReport.Response("no task of the job runs there");
        }
        return probe(location, report.reporter());
    }

    /** Probes a reported TaskManager's data port, unless it is probed or lost already. */
    LostTaskManagerReport.Response probe(TaskManagerLocation location, String reporter) {
        ResourceID taskManager = location.getResourceID();
        TaskManagerLocation lost = declared.get(taskManager);
        if (lost != null && (isGone(taskManager) || sameDataPort(lost, location))) {
            return new LostTaskManagerReport.Response("declared lost already");
        }
        declared.remove(taskManager);
        if (!probing.add(taskManager)) {
            return new LostTaskManagerReport.Response("being probed");
        }
        long reportedAt = System.nanoTime();
        CompletableFuture.supplyAsync(() -> refuses(location), io)
                .whenCompleteAsync(
                        (refused, failure) -> {
                            long probeMillis =
                                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - reportedAt);
                            probing.remove(taskManager);
                            if (Boolean.TRUE.equals(refused)) {
                                declared.put(taskManager, location);
                                log.info(
                                        "TaskManager {} ({}) is lost: {} reported its data connection broken, and its data port refused a connection {} ms later.",
                                        location.getResourceID(),
                                        location,
                                        reporter,
                                        probeMillis);
                                declareLost.accept(
                                        location.getResourceID(),
                                        new JobMasterException(
                                                "TaskManager with id "
                                                        + location.getResourceID()
                                                        + " is lost: its data port refuses connections (reported by "
                                                        + reporter
                                                        + ")."));
                            } else {
                                log.info(
                                        "{} reported its data connection to TaskManager {} ({}) broken, but its data port did not refuse a connection within {} ms: left to the heartbeats.",
                                        reporter,
                                        location.getResourceID(),
                                        location,
                                        PROBE_TIMEOUT.toMillis());
                            }
                        },
                        mainThread);
        return new LostTaskManagerReport.Response("probing " + location.getResourceID());
    }

    /** The location of a current attempt whose data port the report names; null if none. */
    private static TaskManagerLocation locationOf(
            LostTaskManagerReport report, ExecutionGraph graph) {
        for (ExecutionVertex vertex : graph.getAllExecutionVertices()) {
            TaskManagerLocation location =
                    vertex.getCurrentExecutionAttempt().getAssignedResourceLocation();
            if (location != null
                    && location.dataPort() == report.dataPort()
                    && (location.address().getHostAddress().equals(report.host())
                            || location.getFQDNHostname().equals(report.host())
                            || location.getHostname().equals(report.host()))) {
                return location;
            }
        }
        return null;
    }

    private static boolean sameDataPort(TaskManagerLocation a, TaskManagerLocation b) {
        return a.address().equals(b.address()) && a.dataPort() == b.dataPort();
    }

    /** Whether the TaskManager's data port refuses a connection; false on success or timeout. */
    static boolean refuses(TaskManagerLocation location) {
        try (Socket socket = new Socket()) {
            socket.connect(
                    new InetSocketAddress(location.address(), location.dataPort()),
                    (int) PROBE_TIMEOUT.toMillis());
            return false;
        } catch (ConnectException refused) {
            return true;
        } catch (IOException timeoutOrOther) {
            return false;
        }
    }
}
