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

package io.clonos.examples.chaos;

import io.clonos.examples.Shape;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The chaos oracle on written-out runs: the shapes' topology, the fallback condition, the verdict.
 */
class ChaosVerdictTest {

    private static final Shape SLICE =
            Shape.parse(2, "keyby:timers:2/rebalance:map:2/keyby:state:2/keyby:state:2");
    private static final String[] VERTICES = {
        "Source: source -> tag",
        "stage1-timers",
        "stage2-map",
        "stage3-state",
        "stage4-state",
        "chain -> Sink: sink"
    };

    @Test
    void shapesChainForwardStagesAndConnectSubtasksAsFlinkDoes() {
        Shape shape = Shape.parse(4, "forward:map:4/rescale:map:2/rescale:map:4/keyby:state:3");
        assertThat(shape.vertices()).hasSize(5);
        assertThat(shape.vertexOf("Source: source -> tag -> stage1-map")).isZero();
        assertThat(shape.vertexOf("stage2-map")).isEqualTo(1);
        assertThat(shape.vertexOf("chain -> Sink: sink")).isEqualTo(4);
        // rescale 4 -> 2: pairs; 2 -> 4: each to two
        assertThat(shape.consumers(0, 1)).containsExactly(0);
        assertThat(shape.consumers(0, 2)).containsExactly(1);
        assertThat(shape.consumers(1, 1)).containsExactly(2, 3);
        assertThat(shape.consumers(2, 0)).containsExactly(0, 1, 2);
        assertThat(shape.consumers(4, 0)).isEmpty();
        assertThat(Shape.random(42, 7, 4).toString()).isEqualTo(Shape.random(42, 7, 4).toString());
    }

    /** Two sources chained to their merge make the first vertex, named by the merge. */
    @Test
    void chainedSourcesAreTheFirstVertex() {
        Shape shape = Shape.parse(2, "forward:map:2/keyby:state:2").withChainedSources();
        assertThat(shape.vertexOf("sources [Source: odd, Source: even] -> stage1-map")).isZero();
        assertThat(shape.vertexOf("stage2-state")).isEqualTo(1);
        assertThat(shape.toString()).startsWith("chained-sources:2/");
        assertThat(ChaosPlan.fixed(1, shape, -1, 1, 0).jobArguments("out"))
                .contains("--chained-sources");
    }

    @Test
    void aLostSliceNeedsTheFullDepth() {
        Set<String> subtasks = subtasks();
        Set<String> slice =
                Set.of(
                        "Source: source -> tag[0]",
                        "stage1-timers[0]",
                        "stage2-map[0]",
                        "stage3-state[0]",
                        "stage4-state[0]",
                        "chain -> Sink: sink[0]");
        assertThat(ChaosVerdict.fallbackCondition(plan(-1), subtasks, List.of(slice))).isEmpty();
        // hops inside the lost TaskManager are free: the slice leaves it once on every path
        assertThat(ChaosVerdict.fallbackCondition(plan(1), subtasks, List.of(slice))).isEmpty();
        assertThat(ChaosVerdict.fallbackCondition(plan(-1), subtasks, List.of(subtasks)))
                .hasValueSatisfying(why -> assertThat(why).contains("every task"));
    }

    @Test
    void aSliceLostWithTwoTaskManagersNeedsDepthTwo() {
        Set<String> subtasks = subtasks();
        List<Set<String>> twoTaskManagers =
                List.of(
                        Set.of("Source: source -> tag[0]", "stage1-timers[0]", "stage2-map[0]"),
                        Set.of("stage3-state[0]", "stage4-state[0]", "chain -> Sink: sink[0]"));
        // judged in one batch: two hops between TaskManagers, within DSD 2
        assertThat(ChaosVerdict.requiredFallback(plan(1), subtasks, twoTaskManagers))
                .hasValueSatisfying(why -> assertThat(why).contains("2 hops between TaskManagers"));
        assertThat(ChaosVerdict.requiredFallback(plan(2), subtasks, twoTaskManagers)).isEmpty();
        // in two batches the first one's tasks restarted before the second is judged: allowed
        assertThat(ChaosVerdict.fallbackCondition(plan(2), subtasks, twoTaskManagers)).isPresent();
        // a subtask lost twice counts every hop even in one batch
        List<Set<String>> again =
                List.of(
                        Set.of("stage2-map[0]"),
                        Set.of("stage2-map[0]", "stage3-state[0]", "stage4-state[0]"));
        assertThat(ChaosVerdict.requiredFallback(plan(1), subtasks, again)).isPresent();
    }

    @Test
    void aLocalRecoveryThatWasExactlyOnceAndInTimePasses() {
        Map<String, Integer> attempts = attempts(Set.of("stage2-map[0]"));
        ChaosVerdict verdict =
                ChaosVerdict.judge(
                        plan(-1),
                        attempts,
                        List.of(Set.of("stage2-map[0]")),
                        List.of(),
                        links(),
                        3_000,
                        5_000,
                        ChaosVerdict.RECOVERY_BOUND_MILLIS);
        assertThat(verdict.problems).isEmpty();
        assertThat(verdict.local).isTrue();
        assertThat(verdict.taskManagersLost).isEqualTo(1);
    }

    @Test
    void aRunThatEndedBeforeItsFirstLossFails() {
        ChaosVerdict verdict =
                ChaosVerdict.judge(
                        plan(-1),
                        attempts(Set.of()),
                        List.of(),
                        List.of(),
                        links(),
                        1_795_714_725_801L,
                        5_000,
                        ChaosVerdict.RECOVERY_BOUND_MILLIS);
        assertThat(verdict.problems).hasSize(1);
        assertThat(verdict.problems.get(0)).contains("no TaskManager was lost");
    }

    @Test
    void aRollbackWithoutTheConditionALostRecordAndALateEndFail() {
        Map<String, Integer> attempts = attempts(Set.of("stage2-map[0]", "stage3-state[1]"));
        List<String> links = new ArrayList<>(links());
        links.remove(0);
        ChaosVerdict verdict =
                ChaosVerdict.judge(
                        plan(-1),
                        attempts,
                        List.of(Set.of("stage2-map[0]")),
                        List.of(
                                "stage2-map (1/2): LocalRecoveryImpossibleException: cannot reproduce its predecessor"),
                        links,
                        60_000,
                        5_000,
                        ChaosVerdict.RECOVERY_BOUND_MILLIS);
        assertThat(verdict.local).isFalse();
        assertThat(verdict.problems).hasSize(3);
        assertThat(verdict.problems.get(0)).contains("1 lost");
        assertThat(verdict.problems.get(1)).contains("where no fallback condition holds");
        assertThat(verdict.problems.get(2)).contains("beyond its bound");
    }

    @Test
    void aRequiredFallbackMustHappenAndNameItsReason() {
        Set<String> slice =
                Set.of(
                        "Source: source -> tag[0]",
                        "stage1-timers[0]",
                        "stage2-map[0]",
                        "stage3-state[0]",
                        "stage4-state[0]",
                        "chain -> Sink: sink[0]");
        // lost with two TaskManagers at once: 2 hops between TaskManagers, beyond DSD 1
        List<Set<String>> lost =
                List.of(
                        Set.of("Source: source -> tag[0]", "stage1-timers[0]", "stage2-map[0]"),
                        Set.of("stage3-state[0]", "stage4-state[0]", "chain -> Sink: sink[0]"));
        ChaosVerdict local =
                ChaosVerdict.judge(
                        plan(1),
                        attempts(slice),
                        lost,
                        List.of(),
                        links(),
                        1_000,
                        5_000,
                        ChaosVerdict.RECOVERY_BOUND_MILLIS);
        assertThat(local.problems)
                .anySatisfy(
                        p ->
                                assertThat(p)
                                        .contains(
                                                "recovered locally where the fallback condition holds"));
        ChaosVerdict named =
                ChaosVerdict.judge(
                        plan(1),
                        attempts(subtasks()),
                        lost,
                        List.of("Clonos cannot recover [...] locally: X is an orphan: ..."),
                        links(),
                        1_000,
                        5_000,
                        ChaosVerdict.RECOVERY_BOUND_MILLIS);
        assertThat(named.problems).isEmpty();
        ChaosVerdict unnamed =
                ChaosVerdict.judge(
                        plan(1),
                        attempts(subtasks()),
                        lost,
                        List.of("X: LocalRecoveryImpossibleException: its replay made no progress"),
                        links(),
                        1_000,
                        5_000,
                        ChaosVerdict.RECOVERY_BOUND_MILLIS);
        assertThat(unnamed.problems)
                .anySatisfy(p -> assertThat(p).contains("do not name the documented reason"));
    }

    @Test
    void withEveryTaskLostALocalRecoveryIsAsGoodAsTheRollback() {
        Set<String> all = subtasks();
        ChaosVerdict local =
                ChaosVerdict.judge(
                        plan(-1),
                        attempts(all),
                        List.of(all),
                        List.of(),
                        links(),
                        1_000,
                        5_000,
                        ChaosVerdict.RECOVERY_BOUND_MILLIS);
        assertThat(local.fallbackCondition)
                .hasValueSatisfying(why -> assertThat(why).contains("every task"));
        assertThat(local.local).isTrue();
        assertThat(local.problems).isEmpty();
    }

    @Test
    void aFallbackForTheDocumentedFinishedProducerGapIsAllowed() {
        Map<String, Integer> attempts = attempts(subtasks());
        ChaosVerdict verdict =
                ChaosVerdict.judge(
                        plan(-1),
                        attempts,
                        List.of(Set.of("stage2-map[0]")),
                        List.of(
                                "stage2-map (1/2): LocalRecoveryImpossibleException: Channel 1 cannot be replayed: the partition of its producer p is gone (the producer finished, or its partition was released)"),
                        links(),
                        1_000,
                        5_000,
                        ChaosVerdict.RECOVERY_BOUND_MILLIS);
        assertThat(verdict.local).isFalse();
        assertThat(verdict.problems).isEmpty();
    }

    private static ChaosPlan plan(int dsd) {
        return ChaosPlan.fixed(1, SLICE, dsd, 1, 0);
    }

    private static Set<String> subtasks() {
        Set<String> subtasks = new java.util.TreeSet<>();
        for (String vertex : VERTICES) {
            subtasks.add(vertex + "[0]");
            subtasks.add(vertex + "[1]");
        }
        return subtasks;
    }

    private static Map<String, Integer> attempts(Set<String> restarted) {
        Map<String, Integer> attempts = new TreeMap<>();
        for (String subtask : subtasks()) {
            attempts.put(subtask, restarted.contains(subtask) ? 1 : 0);
        }
        return attempts;
    }

    /** A correct output of the plan: every input once, one key's chain. */
    private static List<String> links() {
        List<String> links = new ArrayList<>();
        long digest = 0;
        for (long n = 1; n <= plan(-1).count; n++) {
            long next = n * 31 + digest;
            links.add("0," + n + "," + digest + "," + next + ",s:" + n);
            digest = next;
        }
        return links;
    }
}
