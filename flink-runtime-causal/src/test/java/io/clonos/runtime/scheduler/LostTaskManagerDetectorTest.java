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

import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.taskmanager.TaskManagerLocation;

import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;

import static org.assertj.core.api.Assertions.assertThat;

/** The probe that confirms a reported TaskManager's death. */
class LostTaskManagerDetectorTest {

    @Test
    void aListeningDataPortIsNoProofOfDeathAClosedOneIs() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        int port;
        try (ServerSocket dataPort = new ServerSocket(0, 50, loopback)) {
            port = dataPort.getLocalPort();
            assertThat(LostTaskManagerDetector.refuses(location(loopback, port)))
                    .as("a process listens on the data port")
                    .isFalse();
        }
        assertThat(LostTaskManagerDetector.refuses(location(loopback, port)))
                .as("nothing listens on the data port any more")
                .isTrue();
    }

    /**
     * A TaskManager is declared lost once per death: more reports of the same death change nothing,
     * and after it registered again under the same id (a StatefulSet's pod, whose name is its
     * resource id) neither do late reports of its old address, but the death of the new incarnation
     * is declared, not left to the heartbeats.
     */
    @Test
    void aTaskManagerIsDeclaredLostOncePerDeath() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        ResourceID id = ResourceID.generate();
        TaskManagerLocation first = new TaskManagerLocation(id, loopback, closedPort(loopback));
        Set<ResourceID> registered = new HashSet<>(Set.of(id));
        List<ResourceID> declaredLost = new ArrayList<>();
        LostTaskManagerDetector lost = lostTaskManagers(declaredLost, registered);

        lost.probe(first, "a consumer");
        assertThat(declaredLost).containsExactly(id);
        assertThat(lost.probe(first, "another consumer")).contains("declared lost already");

        registered.add(id);
        assertThat(lost.probe(first, "a consumer's late report"))
                .as("the old address, after the TaskManager came back")
                .contains("declared lost already");
        assertThat(declaredLost).hasSize(1);

        int port;
        do {
            port = closedPort(loopback);
        } while (port == first.dataPort());
        TaskManagerLocation second = new TaskManagerLocation(id, loopback, port);
        lost.probe(second, "a consumer of its next incarnation");
        assertThat(declaredLost).containsExactly(id, id);
    }

    /**
     * A producer's report names only its consumer's host: every TaskManager of the job there is
     * probed, and only the one whose data port refuses is declared lost; one that listens, or one
     * on another host, is left alone. A consumer's report names the data port: only that
     * TaskManager is probed.
     */
    @Test
    void aReportOfAConsumersHostProbesEveryTaskManagerOnIt() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        List<ResourceID> declaredLost = new ArrayList<>();
        Set<ResourceID> registered = new HashSet<>();
        LostTaskManagerDetector lost = lostTaskManagers(declaredLost, registered);
        try (ServerSocket alive = new ServerSocket(0, 50, loopback)) {
            TaskManagerLocation living = location(loopback, alive.getLocalPort());
            TaskManagerLocation dead = location(loopback, closedPort(loopback));
            TaskManagerLocation elsewhere =
                    location(InetAddress.getByName("192.0.2.1"), closedPort(loopback));
            List<TaskManagerLocation> running = List.of(living, dead, elsewhere);
            running.forEach(location -> registered.add(location.getResourceID()));

            String verdict =
                    lost.reported(
                            LostTaskManagerReport.ofConsumerHost(loopback.getHostAddress()),
                            "a producer",
                            running);

            assertThat(declaredLost).containsExactly(dead.getResourceID());
            assertThat(verdict)
                    .contains(living.getResourceID().toString())
                    .contains(dead.getResourceID().toString())
                    .doesNotContain(elsewhere.getResourceID().toString());

            TaskManagerLocation nextDead = location(loopback, closedPort(loopback));
            registered.add(nextDead.getResourceID());
            lost.reported(
                    new LostTaskManagerReport(loopback.getHostAddress(), living.dataPort()),
                    "a consumer",
                    List.of(living, nextDead));
            assertThat(declaredLost)
                    .as("a report that names a data port probes that TaskManager only")
                    .containsExactly(dead.getResourceID());
        }
    }

    /**
     * Two TaskManagers died at once, and nobody is left to report the second: the failure of a task
     * of the first has every TaskManager of the job probed, the second is declared lost, and the
     * batch of failures is judged only after that, with the second's tasks failed and in it.
     */
    @Test
    void aFailureProbesEveryTaskManagerOfTheJobAndTheBatchWaitsForTheProbes() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        List<Runnable> probes = new ArrayList<>();
        List<String> events = new ArrayList<>();
        Set<ResourceID> registered = new HashSet<>();
        LostTaskManagerDetector lost =
                new LostTaskManagerDetector(
                        probes::add,
                        Runnable::run,
                        Runnable::run,
                        (taskManager, cause) -> {
                            events.add("declared " + taskManager);
                            registered.remove(taskManager);
                        },
                        registered::contains,
                        LoggerFactory.getLogger(LostTaskManagerDetectorTest.class));
        try (ServerSocket alive = new ServerSocket(0, 50, loopback)) {
            TaskManagerLocation living = location(loopback, alive.getLocalPort());
            TaskManagerLocation unreported = location(loopback, closedPort(loopback));
            TaskManagerLocation declaredAlready = location(loopback, closedPort(loopback));
            registered.add(living.getResourceID());
            registered.add(unreported.getResourceID());

            assertThat(lost.awaitingProbes(() -> events.add("too early")))
                    .as("no probe under way")
                    .isFalse();
            lost.sweep(List.of(living, unreported, declaredAlready), "a task (1/2)");
            assertThat(probes).as("a TaskManager that is gone is not probed").hasSize(2);
            assertThat(lost.awaitingProbes(() -> events.add("batch judged"))).isTrue();

            probes.get(0).run();
            assertThat(events).as("one probe is still under way").isEmpty();
            probes.get(1).run();
            assertThat(events)
                    .containsExactly("declared " + unreported.getResourceID(), "batch judged");
            assertThat(lost.awaitingProbes(() -> events.add("again"))).isFalse();
        }
    }

    /**
     * A batch whose judgment found an orphan waits for one more probe of every TaskManager before
     * it falls back: a TaskManager that died with the batch's but still answered the first sweep
     * (its process not torn down yet) is declared lost then, and its subtasks join the batch before
     * it is judged again. Once per batch.
     */
    @Test
    void aBatchWithAnOrphanIsJudgedAgainAfterOneMoreProbe() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        Set<ResourceID> registered = new HashSet<>();
        List<ResourceID> declaredLost = new ArrayList<>();
        List<Runnable> later = new ArrayList<>();
        LostTaskManagerDetector lost = lostTaskManagers(declaredLost, registered, later::add);
        List<String> judged = new ArrayList<>();
        try (ServerSocket alive = new ServerSocket(0, 50, loopback)) {
            TaskManagerLocation living = location(loopback, alive.getLocalPort());
            TaskManagerLocation diedSince = location(loopback, closedPort(loopback));
            registered.add(living.getResourceID());
            registered.add(diedSince.getResourceID());

            assertThat(
                            lost.probeAgainBeforeFallback(
                                    () -> List.of(living, diedSince),
                                    "a0 is an orphan",
                                    () -> judged.add("again")))
                    .isTrue();
            assertThat(lost.awaitingProbes(() -> judged.add("again")))
                    .as("the probes are still to start")
                    .isTrue();
            assertThat(declaredLost).isEmpty();
            assertThat(later).hasSize(1);

            later.get(0).run();
            assertThat(declaredLost).containsExactly(diedSince.getResourceID());
            assertThat(judged).containsExactly("again");
            assertThat(lost.awaitingProbes(() -> judged.add("too often"))).isFalse();

            assertThat(
                            lost.probeAgainBeforeFallback(
                                    () -> List.of(living),
                                    "a0 is an orphan",
                                    () -> judged.add("too often")))
                    .as("the same batch, probed again already")
                    .isFalse();
            lost.sweep(List.of(living), "b0 (1/2)");
            assertThat(
                            lost.probeAgainBeforeFallback(
                                    () -> List.of(living),
                                    "b0 is an orphan",
                                    () -> judged.add("next batch")))
                    .as("the next batch")
                    .isTrue();
            later.get(1).run();
            assertThat(judged).containsExactly("again", "next batch");
            assertThat(declaredLost).hasSize(1);
        }
    }

    /**
     * Probes on the calling thread; a TaskManager declared lost is added to {@code declaredLost}
     * and leaves {@code registered}.
     */
    private static LostTaskManagerDetector lostTaskManagers(
            List<ResourceID> declaredLost, Set<ResourceID> registered) {
        return lostTaskManagers(declaredLost, registered, Runnable::run);
    }

    /** The same; {@code later} runs the probes again of a batch with an orphan. */
    private static LostTaskManagerDetector lostTaskManagers(
            List<ResourceID> declaredLost, Set<ResourceID> registered, Executor later) {
        return new LostTaskManagerDetector(
                Runnable::run,
                Runnable::run,
                later,
                (taskManager, cause) -> {
                    declaredLost.add(taskManager);
                    registered.remove(taskManager);
                },
                registered::contains,
                LoggerFactory.getLogger(LostTaskManagerDetectorTest.class));
    }

    /** A port that nothing listens on any more. */
    private static int closedPort(InetAddress address) throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 50, address)) {
            return socket.getLocalPort();
        }
    }

    private static TaskManagerLocation location(InetAddress address, int dataPort) {
        return new TaskManagerLocation(ResourceID.generate(), address, dataPort);
    }
}
