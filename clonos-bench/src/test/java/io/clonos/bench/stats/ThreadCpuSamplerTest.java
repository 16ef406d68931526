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

package io.clonos.bench.stats;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class ThreadCpuSamplerTest {

    @Test
    void flinkTaskThreadsAreGroupedByTaskAndTheJvmsThreadsByKind() {
        assertThat(ThreadCpuSampler.groupOf("window (1/2)#0")).isEqualTo("task window");
        // the kernel keeps 15 characters of a thread's name
        assertThat(ThreadCpuSampler.groupOf("stateful-map (1")).isEqualTo("task stateful-map");
        assertThat(ThreadCpuSampler.groupOf("Source: source ")).isEqualTo("task Source: source");
        assertThat(ThreadCpuSampler.groupOf("C2 CompilerThre")).isEqualTo("JIT C2");
        assertThat(ThreadCpuSampler.groupOf("C1 CompilerThre")).isEqualTo("JIT C1");
        assertThat(ThreadCpuSampler.groupOf("GC Thread#1")).isEqualTo("GC");
        assertThat(ThreadCpuSampler.groupOf("G1 Conc#0")).isEqualTo("GC");
        assertThat(ThreadCpuSampler.groupOf("Flink Netty Ser")).isEqualTo("Netty");
        assertThat(ThreadCpuSampler.groupOf("System Time Tri")).isEqualTo("timer threads");
        assertThat(ThreadCpuSampler.groupOf("AsyncOperations")).isEqualTo("checkpoints (async)");
        assertThat(ThreadCpuSampler.groupOf("pool-3-thread-1")).isEqualTo("other");
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void theCpuOfAThreadThatEndedIsCountedInItsGroup() throws Exception {
        long usedNanos;
        long from = System.currentTimeMillis();
        ThreadCpuSampler sampler = ThreadCpuSampler.start();
        long[] used = new long[1];
        Thread busy =
                new Thread(
                        () -> {
                            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
                            // the loop's condition is the work: the compiler cannot drop it
                            while (threads.getCurrentThreadCpuTime()
                                    < TimeUnit.MILLISECONDS.toNanos(1_200)) {
                                Thread.onSpinWait();
                            }
                            used[0] = threads.getCurrentThreadCpuTime();
                        },
                        "burner (1/1)#0");
        busy.start();
        busy.join();
        usedNanos = used[0];
        // samples after the thread ended do not see it: its last sample counts
        sampler.close();
        long to = System.currentTimeMillis();

        ThreadCpuSampler.Window window = sampler.between(from, to);

        assertThat(window.cpuNanosByGroup()).containsKey("task burner");
        // the last sample before the thread ended may be up to one period short of its CPU
        assertThat(window.cpuNanosByGroup().get("task burner"))
                .isBetween(
                        usedNanos
                                - TimeUnit.MILLISECONDS.toNanos(
                                        ThreadCpuSampler.PERIOD_MILLIS + 20),
                        usedNanos + TimeUnit.MILLISECONDS.toNanos(20));
        assertThat(window.millis()).isPositive();
    }

    @Test
    void aGroupsCpuPerElementCountsTheElementsOfTheWindowsLength() {
        ThreadCpuSampler.Window window =
                new ThreadCpuSampler.Window(2_000, java.util.Map.of("task a", 4_000L));
        // 1,000 elements per second over the 2 s window: 2,000 elements
        assertThat(window.nanosPerElement(1_000)).containsEntry("task a", 2.0);
        assertThat(window.nanosPerElement(0))
                .as("no element: per one")
                .containsEntry("task a", 4_000.0);
    }
}
