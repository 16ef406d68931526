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

package io.clonos.nexmark;

import io.clonos.bench.report.FailurePlan;
import io.clonos.nexmark.failure.FailureQuery;
import io.clonos.nexmark.failure.FailureSettings;
import io.clonos.nexmark.failure.NexmarkFailure;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The failure experiment, small, on a Kafka broker in this JVM: Q3, Q8 and the synthetic job lose a
 * TaskManager on Clonos and on Flink. Clonos recovers only the lost subtasks, and its committed
 * Kafka output (read committed) equals the output of a failure-free run; the experiment reports
 * both systems' recovery times from the same run.
 */
class NexmarkFailureITCase {

    @TempDir Path output;

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = FailureQuery.class, names = "Q3", mode = EnumSource.Mode.EXCLUDE)
    @Timeout(value = 8, unit = TimeUnit.MINUTES)
    void lostTaskManagerIsRecoveredExactlyOnce(FailureQuery query) throws Exception {
        lostTaskManager(query);
    }

    /**
     * Q3 as above. Slow: {@code NexmarkFailureOnProcessesIT} (clonos-dist) runs Q3's failure
     * experiment with the same checks on separate processes, its TaskManager killed with SIGKILL.
     */
    @Test
    @Tag("slow")
    @Timeout(value = 8, unit = TimeUnit.MINUTES)
    void lostTaskManagerOfQ3IsRecoveredExactlyOnce() throws Exception {
        lostTaskManager(FailureQuery.Q3);
    }

    private void lostTaskManager(FailureQuery query) throws Exception {
        FailureSettings settings = new FailureSettings();
        settings.query = query;
        settings.syntheticStateMb = 1;
        settings.rate = 2_000;
        settings.load = 0;
        settings.checkpointIntervalMs = 1_000;
        settings.seconds = 24;
        settings.killAfterSeconds = 12;
        settings.windowSeconds = 4;
        settings.output = output;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();

        // the progress lines go to the test's output as they come, and are checked at the end
        PrintStream both =
                new PrintStream(
                        new TeeOutputStream(printed, System.out), true, StandardCharsets.UTF_8);
        List<NexmarkFailure.Run> runs = new NexmarkFailure(settings, both, List.of()).run();

        NexmarkFailure.Run clonos = runs.get(0);
        NexmarkFailure.Run flink = runs.get(1);
        assertThat(clonos.system()).isEqualTo("clonos");
        assertThat(flink.system()).isEqualTo("flink");
        assertThat(clonos.figures().results).as("results").isPositive();
        assertThat(clonos.missing()).as("results missing on Clonos").isZero();
        assertThat(clonos.duplicated()).as("results duplicated on Clonos").isZero();
        assertThat(clonos.local())
                .as(
                        "Clonos restarted only the lost TaskManager's subtasks (%d of %d restarted)",
                        clonos.restartedSubtasks(), clonos.subtasks())
                .isTrue();
        assertThat(flink.restartedSubtasks())
                .as("Flink restarts the whole job")
                .isEqualTo(flink.subtasks());
        assertThat(flink.exactlyOnce())
                .as("Flink, exactly once with the transactional sink as well")
                .isTrue();
        assertThat(runs).allMatch(run -> run.recoveryMs() >= 0);
        assertThat(runs)
                .as("the JobManager recorded each failure, after it")
                .allMatch(run -> run.detectionMs() >= 0);
        assertThat(runs)
                .as("the state at the last checkpoint before the failure")
                .allMatch(run -> run.stateBytes() > 0);
        assertThat(runs)
                .as("the lost subtask's results came again after the failure")
                .allMatch(run -> run.firstOutputMs() >= 0);
        assertThat(runs).allMatch(run -> run.repetition() == 0);

        String prefix = query.id() + "-";
        assertThat(Files.readString(output.resolve(prefix + "summary.json")))
                .contains("\"setup\":{\"processes\":\"embedded\",\"failure\":\"terminated\"")
                .contains("\"clonos\":{\"detection_ms\":")
                .contains("\"flink\":{\"detection_ms\":")
                .contains("\"recovery_robust_ms\":")
                .contains("\"first_output_ms\":")
                .contains("\"breakdown\":{\"detection_ms\":")
                .contains("\"lost\":0,\"duplicated\":0")
                .contains("\"recoveryMs\":");
        assertThat(Files.readAllLines(output.resolve(prefix + "outputs-clonos-0.csv")))
                .as("each result's times, to compute the figures again")
                .hasSize((int) clonos.figures().results + 1);
        assertThat(Files.readAllLines(output.resolve(prefix + "timeline.csv")))
                .first()
                .asString()
                .startsWith("system,ms_since_kill");
        assertThat(Files.readString(output.resolve(prefix + "failure.html")))
                .contains("<svg")
                .contains("clonos")
                .contains("flink");
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .contains("lost (terminated)")
                .contains("recovery time");
    }

    /**
     * The paper's scenarios of three failures on its synthetic job: the TaskManagers of three of
     * four slices lost at once, or 5 s apart (each loss while the replacements of the one before
     * may still replay). Clonos recovers the three slices locally, without the global rollback, and
     * the output is exactly once.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = FailurePlan.class,
            names = {"CONCURRENT"})
    @Timeout(value = 8, unit = TimeUnit.MINUTES)
    void threeLossesAreRecoveredLocallyAndExactlyOnce(FailurePlan failures) throws Exception {
        threeLosses(failures);
    }

    /**
     * The staggered losses of {@link #threeLossesAreRecoveredLocallyAndExactlyOnce}, in the slow
     * run (losses 1-5 s apart run in the default one in {@code ChaosITCase}).
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = FailurePlan.class,
            names = {"STAGGERED"})
    @Timeout(value = 8, unit = TimeUnit.MINUTES)
    @Tag("slow")
    void staggeredLossesAreRecoveredLocallyAndExactlyOnce(FailurePlan failures) throws Exception {
        threeLosses(failures);
    }

    private void threeLosses(FailurePlan failures) throws Exception {
        FailureSettings settings = new FailureSettings();
        settings.query = FailureQuery.SYNTHETIC;
        settings.failures = failures;
        settings.parallelism = 4;
        settings.partitionsPerSubtask = 2;
        settings.syntheticStateMb = 1;
        settings.standby = false;
        settings.rate = 2_000;
        settings.load = 0;
        settings.checkpointIntervalMs = 1_000;
        settings.seconds = 30;
        settings.killAfterSeconds = 8;
        settings.output = output;

        List<NexmarkFailure.Run> runs = new NexmarkFailure(settings, System.out, List.of()).run();

        NexmarkFailure.Run clonos = runs.get(0);
        NexmarkFailure.Run flink = runs.get(1);
        assertThat(clonos.exactlyOnce())
                .as("Clonos: missing %d, duplicated %d", clonos.missing(), clonos.duplicated())
                .isTrue();
        // the three slices restarted and the fourth ran on (a global rollback restarts them all)
        assertThat(clonos.restartedSubtasks())
                .as("the three lost slices restarted, nothing else")
                .isEqualTo(clonos.subtasks() * 3 / 4);
        assertThat(flink.exactlyOnce()).isTrue();
        assertThat(flink.restartedSubtasks()).isEqualTo(flink.subtasks());
        assertThat(Files.readString(output.resolve("synthetic-summary.json")))
                .contains(
                        "\"failures\":\"%s\",\"kills\":3,\"kill_spacing_ms\":%d"
                                .formatted(failures.label(), failures.spacingMs));
    }

    /** Writes to two streams. */
    private static final class TeeOutputStream extends OutputStream {
        private final OutputStream first;
        private final OutputStream second;

        TeeOutputStream(OutputStream first, OutputStream second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public void write(int b) throws IOException {
            first.write(b);
            second.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            first.write(b, off, len);
            second.write(b, off, len);
        }
    }
}
