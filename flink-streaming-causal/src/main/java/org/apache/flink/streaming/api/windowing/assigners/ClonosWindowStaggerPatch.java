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

    /** What the patch made of an assigner. */
    public enum Stagger {
        /** The assigner staggers nothing, or was set to the aligned offset. */
        FIXED,
        /** The assigner staggers by a time or random number of the task's first element. */
        CHOSEN_AT_FIRST_ELEMENT,
        /** The assigner reads no stagger: nothing to do. */
        NONE
    }

    /** Sets the aligned stagger offset of {@code assigner} before it runs, where it has one. */
    public static Stagger fixAlignedStagger(WindowAssigner<?, ?> assigner) {
        Class<?> declaring;
        if (assigner instanceof TumblingEventTimeWindows) {
            declaring = TumblingEventTimeWindows.class;
        } else if (assigner instanceof TumblingProcessingTimeWindows) {
            declaring = TumblingProcessingTimeWindows.class;
        } else {
            return Stagger.NONE;
        }
        if (FlinkFields.get(assigner, declaring, "windowStagger") != WindowStagger.ALIGNED) {
            return Stagger.CHOSEN_AT_FIRST_ELEMENT;
        }
        FlinkFields.set(assigner, declaring, "staggerOffset", 0L);
        return Stagger.FIXED;
    }
}
