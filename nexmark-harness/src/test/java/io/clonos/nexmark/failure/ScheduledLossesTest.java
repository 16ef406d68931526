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

package io.clonos.nexmark.failure;

import io.clonos.bench.report.FailurePlan;
import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.runtime.jobgraph.JobGraph;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The failure plans as one run carries them out: which subtasks' TaskManagers go, and when. */
class ScheduledLossesTest {

    private static final JobID JOB = new JobID();

    @Test
    void oneLossTakesTheFirstSubtasksTaskManagerOnce() throws Exception {
        Losing cluster = new Losing();
        ScheduledLosses losses = new ScheduledLosses(FailurePlan.ONE, "stage", 1_000);

        assertThat(losses.firstDue(999)).isFalse();
        assertThat(losses.loseDue(cluster, JOB, 999)).isEmpty();
        assertThat(losses.firstDue(1_000)).isTrue();
        assertThat(losses.loseDue(cluster, JOB, 1_000)).containsExactly("tm-of-0");
        assertThat(losses.loseDue(cluster, JOB, 60_000)).isEmpty();

        assertThat(cluster.calls).containsExactly(List.of(0));
        assertThat(losses.done()).isTrue();
        assertThat(losses.firstLostAt()).as("when the TaskManager was lost").isEqualTo(1_000);
    }

    @Test
    void concurrentLossesGoTogetherFromOneView() throws Exception {
        Losing cluster = new Losing();
        ScheduledLosses losses = new ScheduledLosses(FailurePlan.CONCURRENT, "stage", 1_000);

        assertThat(losses.loseDue(cluster, JOB, 1_050))
                .containsExactly("tm-of-0", "tm-of-1", "tm-of-2");
        assertThat(cluster.calls).containsExactly(List.of(0, 1, 2));
        assertThat(losses.done()).isTrue();
    }

    @Test
    void staggeredLossesComeTheSpacingApart() throws Exception {
        Losing cluster = new Losing();
        ScheduledLosses losses = new ScheduledLosses(FailurePlan.STAGGERED, "stage", 1_000);

        assertThat(losses.loseDue(cluster, JOB, 1_000)).containsExactly("tm-of-0");
        long first = losses.firstLostAt();
        assertThat(losses.loseDue(cluster, JOB, 5_999)).isEmpty();
        assertThat(losses.done()).isFalse();
        assertThat(losses.loseDue(cluster, JOB, 6_000)).containsExactly("tm-of-1");
        assertThat(losses.firstDue(6_000)).as("the first is behind").isFalse();
        assertThat(losses.loseDue(cluster, JOB, 11_000)).containsExactly("tm-of-2");

        assertThat(cluster.calls).containsExactly(List.of(0), List.of(1), List.of(2));
        assertThat(losses.done()).isTrue();
        assertThat(losses.firstLostAt()).as("the figures count from the first").isEqualTo(first);
    }

    @Test
    void aLateCheckLosesEverythingDueAtOnce() throws Exception {
        Losing cluster = new Losing();
        ScheduledLosses losses = new ScheduledLosses(FailurePlan.STAGGERED, "stage", 1_000);

        losses.loseDue(cluster, JOB, 1_000);
        assertThat(losses.loseDue(cluster, JOB, 12_000)).containsExactly("tm-of-1", "tm-of-2");
        assertThat(cluster.calls).containsExactly(List.of(0), List.of(1, 2));
    }

    @Test
    void subtasksSharingATaskManagerAreRefused() {
        assertThatThrownBy(
                        () ->
                                FailureClusters.requireDistinct(
                                        List.of("tm-a", "tm-b", "tm-a"), "stage", List.of(0, 1, 2)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("[tm-a, tm-b, tm-a]")
                .hasMessageContaining("one slot");
    }

    /** A cluster that only records which subtasks' TaskManagers it was asked to lose. */
    private static final class Losing implements FailureClusters.Cluster {
        final List<List<Integer>> calls = new ArrayList<>();

        @Override
        public FailureClusters.Lost loseTaskManagersOf(
                JobID job, String vertex, List<Integer> subtasks) {
            calls.add(List.copyOf(subtasks));
            return new FailureClusters.Lost(
                    subtasks.stream().map(s -> "tm-of-" + s).toList(), 1_000L * calls.size());
        }

        @Override
        public JobID submit(JobGraph job, List<Class<?>> userClasses) {
            throw new UnsupportedOperationException();
        }

        @Override
        public JobStatus status(JobID job) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean running(JobID job) {
            throw new UnsupportedOperationException();
        }

        @Override
        public int restartedSubtasks(JobID job) {
            throw new UnsupportedOperationException();
        }

        @Override
        public int subtasks(JobID job) {
            throw new UnsupportedOperationException();
        }

        @Override
        public String cause(JobID job) {
            throw new UnsupportedOperationException();
        }

        @Override
        public ClusterRestClient rest() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {}
    }
}
