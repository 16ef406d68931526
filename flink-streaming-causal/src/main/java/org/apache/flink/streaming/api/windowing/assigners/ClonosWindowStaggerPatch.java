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

import io.clonos.runtime.reflect.FlinkFields;

import org.apache.flink.annotation.Internal;

/**
 * <b>Patch of Flink's behaviour.</b> Flink's tumbling window assigners choose their stagger offset
 * lazily, at the first element a task assigns, by reading the processing time. A recovered task's
 * first element is another element than its predecessor's, so the recovered one reads the time
 * where its predecessor did not, and its replay cannot follow its log. With {@link
 * WindowStagger#ALIGNED} (Flink's default) the offset is 0 whatever the time: this sets it before
 * the job runs, so that no attempt reads the time for it. The field is private, so here only.
 */
@Internal
public final class ClonosWindowStaggerPatch {

    private ClonosWindowStaggerPatch() {}

    /** How an assigner staggers its windows. */
    public enum Stagger {
        /** By a stagger offset chosen at the task's first element, 0 whatever the time. */
        ALIGNED,
        /** By a time or random number of the task's first element. */
        CHOSEN_AT_FIRST_ELEMENT,
        /** Not at all: the assigner reads no stagger offset. */
        NONE
    }

    /** How {@code assigner} staggers its windows. */
    public static Stagger staggerOf(WindowAssigner<?, ?> assigner) {
        Class<?> declaring = staggering(assigner);
        if (declaring == null) {
            return Stagger.NONE;
        }
        return FlinkFields.get(assigner, declaring, "windowStagger") == WindowStagger.ALIGNED
                ? Stagger.ALIGNED
                : Stagger.CHOSEN_AT_FIRST_ELEMENT;
    }

    /**
     * Sets the stagger offset of {@code assigner}, whose stagger is {@link Stagger#ALIGNED}, to 0
     * before it runs.
     */
    public static void fixAlignedStagger(WindowAssigner<?, ?> assigner) {
        if (staggerOf(assigner) != Stagger.ALIGNED) {
            throw new IllegalArgumentException(assigner + " has no aligned stagger to fix");
        }
        FlinkFields.set(assigner, staggering(assigner), "staggerOffset", 0L);
    }

    /** The class of {@code assigner} that declares its stagger fields; null if none does. */
    private static Class<?> staggering(WindowAssigner<?, ?> assigner) {
        if (assigner instanceof TumblingEventTimeWindows) {
            return TumblingEventTimeWindows.class;
        }
        if (assigner instanceof TumblingProcessingTimeWindows) {
            return TumblingProcessingTimeWindows.class;
        }
        return null;
    }
}
