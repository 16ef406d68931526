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

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ProgressSamplerTest {

    /** Event time 0 was due at wall-clock 1,000,000; the kill was at 1,005,000. */
    private static final long KILLED_AT = 1_005_000;

    private static long dueAt(long eventTime) {
        return 1_000_000 + eventTime;
    }

    @Test
    void watermarksBecomeTheirDueTimeSinceTheKill() {
        List<String> lines =
                ProgressSampler.csv(
                        List.of(
                                new ProgressSampler.Sample(
                                        1_006_000, "q8-join", 1, "currentInputWatermark", 4_000),
                                new ProgressSampler.Sample(
                                        1_006_000,
                                        "Source: nexmark-events",
                                        0,
                                        "Source__nexmark-events.currentOutputWatermark",
                                        5_500)),
                        KILLED_AT,
                        ProgressSamplerTest::dueAt);

        assertThat(lines)
                .containsExactly(
                        "ms_since_kill,vertex,subtask,metric,value",
                        "1000,\"q8-join\",1,currentInputWatermark,-1000",
                        "1000,\"Source: nexmark-events\",0,Source__nexmark-events.currentOutputWatermark,500");
    }

    @Test
    void countsLagsAndCpuTimesStayAsTheyAreAndNoWatermarkIsEmpty() {
        List<String> lines =
                ProgressSampler.csv(
                        List.of(
                                new ProgressSampler.Sample(
                                        1_004_000, "q8-join", 0, "numRecordsIn", 12_345),
                                new ProgressSampler.Sample(
                                        1_004_000,
                                        "Source: \"x\"",
                                        0,
                                        "Source__x.currentEmitEventTimeLag",
                                        250),
                                new ProgressSampler.Sample(
                                        1_004_000,
                                        "q8-join",
                                        0,
                                        "currentInputWatermark",
                                        Long.MIN_VALUE),
                                new ProgressSampler.Sample(
                                        1_004_500,
                                        "taskmanager tm-1",
                                        ProgressSampler.NO_SUBTASK,
                                        ProgressSampler.TASK_MANAGER_CPU,
                                        7_000_000_000L)),
                        KILLED_AT,
                        ProgressSamplerTest::dueAt);

        assertThat(lines)
                .containsExactly(
                        "ms_since_kill,vertex,subtask,metric,value",
                        "-1000,\"q8-join\",0,numRecordsIn,12345",
                        "-1000,\"Source: 'x'\",0,Source__x.currentEmitEventTimeLag,250",
                        "-1000,\"q8-join\",0,currentInputWatermark,",
                        "-500,\"taskmanager tm-1\",-1,Status.JVM.CPU.Time,7000000000");
    }
}
