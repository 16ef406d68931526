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
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class CheckpointPauseTest {

    private static final Duration LIMIT = Duration.ofSeconds(30);

    /** Periodic checkpoints as the coordinator keeps them: triggering or not, counting changes. */
    private static final class Coordinator implements CheckpointPause.Checkpoints {
        boolean periodic = true;
        boolean triggering = true;
        int stops;
        int starts;

        @Override
        public boolean periodic() {
            return periodic;
        }

        @Override
        public boolean triggering() {
            return triggering;
        }

        @Override
        public void stop() {
            triggering = false;
            stops++;
        }

        @Override
        public void start() {
            triggering = true;
            starts++;
        }
    }

    private final Coordinator coordinator = new Coordinator();
    private final Set<String> ended = new HashSet<>();
    private final List<Runnable> timers = new ArrayList<>();
    private final List<Duration> delays = new ArrayList<>();
    private long nanos;

    private CheckpointPause<String> pause(Duration limit) {
        return new CheckpointPause<>(
                limit,
                coordinator,
                task -> !ended.contains(task),
                (action, delay) -> {
                    timers.add(action);
                    delays.add(delay);
                },
                () -> nanos,
                LoggerFactory.getLogger(CheckpointPauseTest.class));
    }

    @Test
    void checkpointsWaitUntilEveryRestartedTaskReportedItsReplaysEnd() {
        CheckpointPause<String> pause = pause(LIMIT);

        pause.replaying(List.of("map-0", "window-0"));
        assertThat(coordinator.triggering).isFalse();
        assertThat(pause.isPaused()).isTrue();
        assertThat(delays).containsExactly(LIMIT);

        pause.replayEnded("window-0");
        pause.replayEnded("source-3");
        assertThat(coordinator.triggering)
                .as("map-0 still replays; a report of a task nobody waits for changes nothing")
                .isFalse();

        pause.replayEnded("map-0");
        assertThat(coordinator.triggering).isTrue();
        assertThat(pause.isPaused()).isFalse();
        assertThat(coordinator.stops).isEqualTo(1);
        assertThat(coordinator.starts).isEqualTo(1);

        timers.forEach(Runnable::run);
        assertThat(coordinator.starts)
                .as("the limit of a pause that ended does nothing")
                .isEqualTo(1);
    }

    @Test
    void aTaskWhoseAttemptEndedIsNotWaitedFor() {
        CheckpointPause<String> pause = pause(LIMIT);
        pause.replaying(List.of("map-0", "map-1"));
        pause.replayEnded("map-0");

        ended.add("map-1");
        pause.attemptEnded();

        assertThat(coordinator.triggering).isTrue();
    }

    @Test
    void aLaterBatchExtendsThePauseAndItsLimit() {
        CheckpointPause<String> pause = pause(LIMIT);
        pause.replaying(List.of("map-0"));
        pause.replaying(List.of("map-1"));
        assertThat(coordinator.stops).as("stopped once").isEqualTo(1);

        timers.get(0).run();
        assertThat(coordinator.triggering)
                .as("the first batch's limit does not end the pause the second extended")
                .isFalse();

        pause.replayEnded("map-0");
        assertThat(coordinator.triggering).isFalse();
        pause.replayEnded("map-1");
        assertThat(coordinator.triggering).isTrue();
    }

    @Test
    void theLimitEndsAPauseWhoseReportsNeverCame() {
        CheckpointPause<String> pause = pause(LIMIT);
        pause.replaying(List.of("map-0"));

        timers.get(0).run();

        assertThat(coordinator.triggering).isTrue();
        assertThat(pause.isPaused()).isFalse();
        pause.replayEnded("map-0");
        assertThat(coordinator.starts).as("a late report starts nothing again").isEqualTo(1);
    }

    @Test
    void checkpointsFlinkStoppedAreLeftToFlink() {
        CheckpointPause<String> pause = pause(LIMIT);
        coordinator.triggering = false;

        pause.replaying(List.of("map-0"));
        pause.replayEnded("map-0");

        assertThat(coordinator.stops).isZero();
        assertThat(coordinator.starts).isZero();
        assertThat(pause.isPaused()).isFalse();
    }

    @Test
    void aPauseThatFlinkEndedIsOverAndTheNextRecoveryPausesAgain() {
        CheckpointPause<String> pause = pause(LIMIT);
        pause.replaying(List.of("map-0"));
        // a global restart: Flink stops the checkpoints and starts them when the job runs again
        pause.jobLeftRunning();
        assertThat(pause.isPaused()).isFalse();
        coordinator.triggering = true;
        assertThat(coordinator.starts).as("left to Flink").isZero();

        pause.replaying(List.of("map-1"));
        assertThat(coordinator.triggering).isFalse();
        assertThat(coordinator.stops).isEqualTo(2);

        pause.replayEnded("map-1");
        assertThat(coordinator.triggering).as("map-0 belonged to the pause Flink ended").isTrue();
    }

    @Test
    void checkpointsThatFlinkStartsForARunningTaskAreStoppedAgainWhileThePauseLasts() {
        CheckpointPause<String> pause = pause(LIMIT);
        pause.replaying(List.of("map-0"));
        // Flink's execution graph starts stopped checkpoints when any task switches to RUNNING
        coordinator.triggering = true;

        pause.taskRunning();
        assertThat(coordinator.triggering).isFalse();
        assertThat(pause.isPaused()).isTrue();

        pause.replayEnded("map-0");
        assertThat(coordinator.triggering).isTrue();
        pause.taskRunning();
        assertThat(coordinator.triggering).as("no pause: left running").isTrue();
    }

    @Test
    void neverPausesWithoutALimitOrWithoutPeriodicCheckpoints() {
        pause(Duration.ZERO).replaying(List.of("map-0"));
        coordinator.periodic = false;
        pause(LIMIT).replaying(List.of("map-0"));

        assertThat(coordinator.stops).isZero();
        assertThat(timers).isEmpty();
    }

    @Test
    void countsTheTimeCheckpointsWereHeldBack() {
        CheckpointPause<String> pause = pause(LIMIT);
        nanos = 1_000_000_000L;
        pause.replaying(List.of("map-0"));
        nanos += 300_000_000L;
        assertThat(pause.heldBackMillis()).as("the current pause counts").isEqualTo(300);
        pause.replayEnded("map-0");
        nanos += 5_000_000_000L;
        assertThat(pause.heldBackMillis()).as("a pause that ended stops counting").isEqualTo(300);
        pause.replaying(List.of("map-1"));
        nanos += 200_000_000L;
        pause.replayEnded("map-1");
        assertThat(pause.heldBackMillis()).isEqualTo(500);
    }
}
