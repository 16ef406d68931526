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

import io.clonos.runtime.protocol.LostTaskManagerReport;

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

import javax.annotation.Nullable;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

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
final class LostTaskManagerDetector {

    /** How long the probe of a reported TaskManager's data port waits for an answer. */
    static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);

    /** How long after a batch's judgment found an orphan its TaskManagers are probed again. */
    static final Duration PROBE_AGAIN_AFTER = Duration.ofSeconds(1);

    private final Executor io;
    private final Executor mainThread;

    /** Runs a task on the main thread {@link #PROBE_AGAIN_AFTER} from now. */
    private final Executor probeAgainLater;

    private final BiConsumer<ResourceID, Exception> declareLost;
    private final Predicate<ResourceID> registered;
    private final Logger log;

    /** TaskManagers being probed. */
    private final Set<ResourceID> probing = new HashSet<>();

    /** What runs once the probes under way ended, if anything waits for them. */
    @Nullable private Runnable onProbesEnded;

    /**
     * Whether the batch being judged had its TaskManagers probed again, or will have; reset by the
     * {@link #sweep} of the next batch's first failure.
     */
    private boolean probedAgain;

    /** Whether the probes again of the batch being judged are still to start. */
    private boolean probeAgainPending;

    /** TaskManagers declared lost, and the data port that refused. */
    private final Map<ResourceID, TaskManagerLocation> declared = new HashMap<>();

    LostTaskManagerDetector(
            Executor io,
            Executor mainThread,
            Executor probeAgainLater,
            BiConsumer<ResourceID, Exception> declareLost,
            Predicate<ResourceID> registered,
            Logger log) {
        this.io = io;
        this.mainThread = mainThread;
        this.probeAgainLater = probeAgainLater;
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

    /**
     * A task reports its connection to a TaskManager broken. A report that names a data port probes
     * that TaskManager; one that names only a host (a producer's, whose consumer connected from a
     * port of its own) probes every TaskManager of the job on the host: the dead one refuses, the
     * others answer and are left alone.
     */
    String reported(LostTaskManagerReport report, String reporter, ExecutionGraph graph) {
        return reported(report, reporter, locationsOf(graph));
    }

    /** The same, among the TaskManagers where current attempts of the job run. */
    String reported(
            LostTaskManagerReport report,
            String reporter,
            Collection<TaskManagerLocation> running) {
        List<TaskManagerLocation> suspects = new ArrayList<>();
        for (TaskManagerLocation location : running) {
            if (isOn(location, report.host())
                    && (!report.knowsDataPort() || location.dataPort() == report.dataPort())) {
                suspects.add(location);
            }
        }
        if (suspects.isEmpty()) {
            return "no task of the job runs there";
        }
        List<String> verdicts = new ArrayList<>();
        for (TaskManagerLocation suspect : suspects) {
            verdicts.add(probe(suspect, reportedBy(reporter), report.knowsDataPort()));
        }
        return String.join("; ", verdicts);
    }

    /** Probes a reported TaskManager's data port, unless it is probed or lost already. */
    String probe(TaskManagerLocation location, String reporter) {
        return probe(location, reportedBy(reporter), true);
    }

    /** Why a reported TaskManager is probed, in its log lines and its failure. */
    private static String reportedBy(String reporter) {
        return reporter + " reported its data connection broken";
    }

    /**
     * Probes every TaskManager of the job, but those gone already, after a task failed. Several
     * TaskManagers die at once when a node, a rack or a deployment goes, and one whose peers all
     * died with it has nobody left to report it: only its heartbeats would find it, seconds after
     * the batch of failures was judged, and its subtasks would count as survivors (an orphan beyond
     * the determinant sharing depth, a global rollback). {@link #awaitingProbes} holds the batch
     * until these probes end, on loopback a few milliseconds, at most {@link #PROBE_TIMEOUT}.
     */
    void sweep(ExecutionGraph graph, String failedTask) {
        sweep(locationsOf(graph), failedTask);
    }

    /** The same, among the TaskManagers where current attempts of the job run. */
    void sweep(Collection<TaskManagerLocation> running, String failedTask) {
        // a batch's first failure: the batch has not been probed again yet
        probedAgain = false;
        probeAll(
                running,
                "the failure of " + failedTask + " had every TaskManager of the job probed");
    }

    private void probeAll(Collection<TaskManagerLocation> running, String cause) {
        for (TaskManagerLocation location : running) {
            if (!isGone(location.getResourceID())) {
                probe(location, cause, false);
            }
        }
    }

    /**
     * Whether probes are under way; if so, {@code retry} runs on the main thread once the last one
     * ended (after the TaskManagers it found dead were declared lost and their tasks failed).
     */
    boolean awaitingProbes(Runnable retry) {
        if (probing.isEmpty() && !probeAgainPending) {
            return false;
        }
        onProbesEnded = retry;
        return true;
    }

    /**
     * Probes every TaskManager of the job again, {@link #PROBE_AGAIN_AFTER} from now, before a
     * batch whose judgment found an orphan falls back; once per batch. TaskManagers that die
     * together (a node) do not close their data ports at the same instant: a dying process keeps
     * its sockets until the kernel has torn down its memory, and the sweep after the first failure
     * finds it answering. Its subtasks then count as survivors downstream of the batch, and the
     * verdict as an orphan, where the whole slice would have recovered locally. A rollback costs
     * far more than this delay. Main thread.
     *
     * @param graph the job, whose TaskManagers are probed when the delay ended
     * @param retry judges the batch again, on the main thread, once these probes ended (after the
     *     TaskManagers found dead were declared lost and their subtasks joined the batch)
     * @return whether the batch waits for these probes; false if it was probed again already, since
     *     its first failure's {@link #sweep}
     */
    boolean probeAgainBeforeFallback(ExecutionGraph graph, String orphans, Runnable retry) {
        return probeAgainBeforeFallback(() -> locationsOf(graph), orphans, retry);
    }

    /** The same, among the TaskManagers where current attempts of the job run then. */
    boolean probeAgainBeforeFallback(
            Supplier<Collection<TaskManagerLocation>> running, String orphans, Runnable retry) {
        if (probedAgain) {
            return false;
        }
        probedAgain = true;
        probeAgainPending = true;
        onProbesEnded = retry;
        log.info(
                "{}; probing the job's TaskManagers again in {} ms before giving up local recovery, in case one of them died with the batch's.",
                orphans,
                PROBE_AGAIN_AFTER.toMillis());
        probeAgainLater.execute(
                () -> {
                    probeAgainPending = false;
                    probeAll(
                            running.get(),
                            "a batch with an orphan had every TaskManager of the job probed again");
                    retryIfProbesEnded();
                });
        return true;
    }

    /** Runs what waits for the probes, once every probe ended. */
    private void retryIfProbesEnded() {
        if (probing.isEmpty() && !probeAgainPending && onProbesEnded != null) {
            Runnable retry = onProbesEnded;
            onProbesEnded = null;
            retry.run();
        }
    }

    /**
     * The same; {@code named}: a report named this TaskManager, rather than its host only or none
     * (a TaskManager that answers is then not worth a line in the log).
     */
    private String probe(TaskManagerLocation location, String cause, boolean named) {
        ResourceID taskManager = location.getResourceID();
        TaskManagerLocation lost = declared.get(taskManager);
        if (lost != null && (isGone(taskManager) || sameDataPort(lost, location))) {
            return "declared lost already";
        }
        declared.remove(taskManager);
        if (!probing.add(taskManager)) {
            return "being probed";
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
                                        "TaskManager {} ({}) is lost: {}, and its data port refused a connection {} ms later.",
                                        location.getResourceID(),
                                        location,
                                        cause,
                                        probeMillis);
                                declareLost.accept(
                                        location.getResourceID(),
                                        new JobMasterException(
                                                "TaskManager with id "
                                                        + location.getResourceID()
                                                        + " is lost: its data port refuses connections ("
                                                        + cause
                                                        + ")."));
                            } else if (named) {
                                log.info(
                                        "TaskManager {} ({}) is left to the heartbeats: {}, but its data port did not refuse a connection within {} ms.",
                                        location.getResourceID(),
                                        location,
                                        cause,
                                        PROBE_TIMEOUT.toMillis());
                            } else {
                                log.debug(
                                        "TaskManager {} ({}) did not refuse a connection; probed because {}.",
                                        location.getResourceID(),
                                        location,
                                        cause);
                            }
                            retryIfProbesEnded();
                        },
                        mainThread);
        return "probing " + location.getResourceID();
    }

    /** The TaskManagers where current attempts of the job run, once each. */
    private static Collection<TaskManagerLocation> locationsOf(ExecutionGraph graph) {
        Map<ResourceID, TaskManagerLocation> found = new LinkedHashMap<>();
        for (ExecutionVertex vertex : graph.getAllExecutionVertices()) {
            TaskManagerLocation location =
                    vertex.getCurrentExecutionAttempt().getAssignedResourceLocation();
            if (location != null) {
                found.putIfAbsent(location.getResourceID(), location);
            }
        }
        return found.values();
    }

    private static boolean isOn(TaskManagerLocation location, String host) {
        return location.address().getHostAddress().equals(host)
                || location.getFQDNHostname().equals(host)
                || location.getHostname().equals(host);
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
