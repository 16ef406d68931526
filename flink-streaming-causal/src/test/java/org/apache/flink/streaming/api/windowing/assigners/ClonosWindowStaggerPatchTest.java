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

package org.apache.flink.streaming.api.windowing.assigners;

import org.apache.flink.streaming.api.windowing.assigners.ClonosWindowStaggerPatch.Stagger;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The patch against Flink's tumbling assigners: it sees their stagger and fixes an aligned one. */
class ClonosWindowStaggerPatchTest {

    /** A task's first element: Flink's assigner would read the time here for its stagger. */
    private static final WindowAssigner.WindowAssignerContext NO_CLOCK =
            new WindowAssigner.WindowAssignerContext() {
                @Override
                public long getCurrentProcessingTime() {
                    throw new AssertionError("the assigner read the time");
                }
            };

    @Test
    void aFixedAlignedAssignerReadsNoTimeAtItsFirstElement() {
        TumblingEventTimeWindows assigner = TumblingEventTimeWindows.of(Duration.ofSeconds(1));
        assertThat(ClonosWindowStaggerPatch.staggerOf(assigner)).isEqualTo(Stagger.ALIGNED);
        assertThatThrownBy(() -> assigner.assignWindows("e", 1_500, NO_CLOCK))
                .as("Flink's assigner as it is")
                .hasMessage("the assigner read the time");

        TumblingEventTimeWindows fixed = TumblingEventTimeWindows.of(Duration.ofSeconds(1));
        ClonosWindowStaggerPatch.fixAlignedStagger(fixed);
        assertThat(fixed.assignWindows("e", 1_500, NO_CLOCK))
                .containsExactly(new TimeWindow(1_000, 2_000));
    }

    @Test
    void staggersChosenAtTheFirstElementAreSeenAndLeftAlone() {
        TumblingEventTimeWindows random =
                TumblingEventTimeWindows.of(
                        Duration.ofSeconds(1), Duration.ZERO, WindowStagger.RANDOM);
        assertThat(ClonosWindowStaggerPatch.staggerOf(random))
                .isEqualTo(Stagger.CHOSEN_AT_FIRST_ELEMENT);
        assertThatThrownBy(() -> ClonosWindowStaggerPatch.fixAlignedStagger(random))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(
                        ClonosWindowStaggerPatch.staggerOf(
                                SlidingEventTimeWindows.of(
                                        Duration.ofSeconds(2), Duration.ofSeconds(1))))
                .isEqualTo(Stagger.NONE);
    }
}
