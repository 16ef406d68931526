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

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Which tasks that are down together are orphans, on small graphs written out. */
class ConnectedFailuresTest {

    /** A pipeline of stages of parallelism 2 joined by all-to-all edges: "a0", "a1", "b0", ... */
    private static Map<String, Collection<String>> allToAll(String... stages) {
        Map<String, Collection<String>> consumers = new HashMap<>();
        for (int s = 0; s < stages.length; s++) {
            for (int i = 0; i < 2; i++) {
                List<String> next = new ArrayList<>();
                if (s + 1 < stages.length) {
                    next.add(stages[s + 1] + 0);
                    next.add(stages[s + 1] + 1);
                }
                consumers.put(stages[s] + i, next);
            }
        }
        return consumers;
    }

    private static ConnectedFailures<String> failures(
            Map<String, Collection<String>> graph, String... down) {
        return new ConnectedFailures<>(graph::get, Set.of(down));
    }

    @Test
    void aLostSliceThroughShufflesIsCoveredByTheFullDepthOnly() {
        Map<String, Collection<String>> graph = allToAll("a", "b", "c", "d", "e");
        assertThat(failures(graph, "a0", "b0", "c0", "d0", "e0").orphans(-1)).isEmpty();
        // a0's choices reach e1 through b0, c0 and d0, which failed with it
        Map<String, ConnectedFailures.Orphan<String>> orphans =
                failures(graph, "a0", "b0", "c0", "d0", "e0").orphans(2);
        assertThat(orphans).containsOnlyKeys("a0", "b0");
        assertThat(orphans.get("a0").hops()).isEqualTo(4);
        assertThat(failures(graph, "a0", "b0", "c0", "d0", "e0").orphans(4)).isEmpty();
    }

    @Test
    void aChainThroughForwardEdgesIsCoveredByDepthAsLongAsTheChain() {
        Map<String, Collection<String>> graph =
                Map.of("a", List.of("b"), "b", List.of("c"), "c", List.of("d"), "d", List.of());
        assertThat(failures(graph, "a", "b").orphans(-1)).isEmpty();
        assertThat(failures(graph, "a", "b").orphans(2)).isEmpty();
        Map<String, ConnectedFailures.Orphan<String>> orphans =
                failures(graph, "a", "b").orphans(1);
        assertThat(orphans).containsOnlyKeys("a");
        assertThat(orphans.get("a")).isEqualTo(new ConnectedFailures.Orphan<>("c", 2));
        assertThat(failures(graph, "a", "b", "c").orphans(2)).containsOnlyKeys("a");
    }

    /**
     * A lost TaskManager's slice (subtask 0 of every stage) with free hops inside a TaskManager:
     * every path to a survivor leaves the TaskManager once, so depth 1 covers it; a second lost
     * TaskManager on the way counts once more.
     */
    @Test
    void hopsInsideATaskManagerAreFreeWhenTheyAreToldSo() {
        Map<String, Collection<String>> graph = allToAll("a", "b", "c", "d");
        // subtask i of every stage runs on TaskManager i
        ConnectedFailures<String> slice =
                new ConnectedFailures<String>(
                        graph::get,
                        task -> false,
                        (producer, consumer) -> producer.charAt(1) == consumer.charAt(1),
                        Set.of("a0", "b0", "c0", "d0"));
        assertThat(slice.orphans(1)).isEmpty();

        // stage b's subtask 1 on a third TaskManager that was lost too: a0 -> b1 -> c0 -> d1
        // crosses three TaskManager boundaries, b1 -> c0 -> d1 two
        ConnectedFailures<String> twoTaskManagers =
                new ConnectedFailures<String>(
                        graph::get,
                        task -> false,
                        (producer, consumer) ->
                                !producer.equals("b1")
                                        && !consumer.equals("b1")
                                        && producer.charAt(1) == consumer.charAt(1),
                        Set.of("a0", "b0", "c0", "d0", "b1"));
        Map<String, ConnectedFailures.Orphan<String>> orphans = twoTaskManagers.orphans(1);
        assertThat(orphans).containsOnlyKeys("a0", "b1");
        assertThat(orphans.get("a0").hops()).isEqualTo(3);
        assertThat(orphans.get("b1").hops()).isEqualTo(2);
        assertThat(twoTaskManagers.orphans(3)).isEmpty();

        // the same slice with every hop counted, as before
        assertThat(failures(graph, "a0", "b0", "c0", "d0").orphans(1)).containsOnlyKeys("a0", "b0");
    }

    /** A failed task whose only consumer survived in its TaskManager reaches it in 0 hops. */
    @Test
    void aSurvivorInTheSameTaskManagerIsReachedForFree() {
        Map<String, Collection<String>> graph = Map.of("a", List.of("b"), "b", List.of());
        ConnectedFailures<String> failures =
                new ConnectedFailures<String>(
                        graph::get, task -> false, (p, c) -> true, Set.of("a"));
        assertThat(failures.orphans(1)).isEmpty();
        assertThat(failures.noSurvivor(graph.keySet())).isEmpty();
    }

    /**
     * A sink that stores its determinants in Kafka has a consumer that never fails: its failed
     * upstream tasks reach it in one hop more, and a job whose every task is down still has it.
     */
    @Test
    void aSinkWhoseDeterminantsAreInKafkaCountsKafkaAsASurvivor() {
        Map<String, Collection<String>> graph =
                Map.of("a", List.of("b"), "b", List.of("sink"), "sink", List.of());
        Set<String> all = Set.of("a", "b", "sink");
        ConnectedFailures<String> withKafka =
                new ConnectedFailures<>(graph::get, "sink"::equals, all);
        assertThat(withKafka.noSurvivor(all)).isEmpty();
        assertThat(withKafka.orphans(-1)).isEmpty();
        assertThat(withKafka.orphans(3)).isEmpty();
        Map<String, ConnectedFailures.Orphan<String>> orphans = withKafka.orphans(1);
        assertThat(orphans).containsOnlyKeys("a", "b");
        assertThat(orphans.get("a")).isEqualTo(new ConnectedFailures.Orphan<>("sink", 3));
        // without Kafka holding them, nothing downstream depends on the lost choices at all
        assertThat(failures(graph, "b", "sink").orphans(1)).isEmpty();
        assertThat(
                        new ConnectedFailures<>(graph::get, "sink"::equals, Set.of("b", "sink"))
                                .orphans(1))
                .containsOnlyKeys("b");
        assertThat(failures(graph, "a", "b", "sink").noSurvivor(all)).isPresent();
    }

    @Test
    void theLongestPathCountsNotTheShortest() {
        // a reaches d directly, and through b and c, which failed with it
        Map<String, Collection<String>> graph =
                Map.of(
                        "a",
                        List.of("b", "d"),
                        "b",
                        List.of("c"),
                        "c",
                        List.of("d"),
                        "d",
                        List.of());
        assertThat(failures(graph, "a", "b", "c").orphans(2)).containsOnlyKeys("a");
        assertThat(failures(graph, "a", "b", "c").orphans(3)).isEmpty();
    }

    @Test
    void failedTasksThatReachNoSurvivorAreNoOrphans() {
        Map<String, Collection<String>> graph =
                Map.of("a", List.of("b"), "b", List.of("c"), "c", List.of(), "x", List.of("c"));
        // the whole path to the sink failed: nothing that kept running depends on a, b or c
        assertThat(failures(graph, "a", "b", "c").orphans(1)).isEmpty();
        assertThat(failures(graph, "a", "b", "c").noSurvivor(graph.keySet())).isEmpty();
        assertThat(failures(graph, "a", "b", "c", "x").noSurvivor(graph.keySet())).isPresent();
    }

    @Test
    void withoutCausalLoggingThereAreNoOrphans() {
        Map<String, Collection<String>> graph =
                Map.of("a", List.of("b"), "b", List.of("c"), "c", List.of());
        assertThat(failures(graph, "a", "b").orphans(0)).isEmpty();
    }
}
