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

import io.clonos.runtime.reflect.ReflectedField;

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

    private static final StaggerFields EVENT_TIME =
            StaggerFields.of(TumblingEventTimeWindows.class);
    private static final StaggerFields PROCESSING_TIME =
            StaggerFields.of(TumblingProcessingTimeWindows.class);

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
        StaggerFields fields = staggering(assigner);
        if (fields == null) {
            return Stagger.NONE;
        }
        return fields.stagger().get(assigner) == WindowStagger.ALIGNED
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
        staggering(assigner).offset().set(assigner, 0L);
    }

    /** The stagger fields of {@code assigner}; null if it has none. */
    private static StaggerFields staggering(WindowAssigner<?, ?> assigner) {
        if (assigner instanceof TumblingEventTimeWindows) {
            return EVENT_TIME;
        }
        if (assigner instanceof TumblingProcessingTimeWindows) {
            return PROCESSING_TIME;
        }
        return null;
    }

    /** An assigner class's stagger and the offset it chose. */
    private record StaggerFields(ReflectedField stagger, ReflectedField offset) {
        static StaggerFields of(Class<?> declaring) {
            return new StaggerFields(
                    ReflectedField.of(declaring, "windowStagger"),
                    ReflectedField.of(declaring, "staggerOffset"));
        }
    }
}
