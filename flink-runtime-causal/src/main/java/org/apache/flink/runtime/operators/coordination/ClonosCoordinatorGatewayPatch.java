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

package org.apache.flink.runtime.operators.coordination;

import io.clonos.runtime.reflect.ReflectedField;

import org.apache.flink.annotation.Internal;

import java.util.Map;
import java.util.TreeSet;

/**
 * <b>Patch of Flink's behaviour.</b> Resets a subtask of an operator coordinator so that the new
 * attempt's gateway takes over the checkpoint marks of the old one.
 *
 * <p>A coordinator's checkpoint marks the gateways of all its subtasks (on the JobManager's main
 * thread), completes on the coordinator's own thread, and then closes them all, failing the whole
 * JobManager process ("Some subtask gateway can be closed while others cannot") if only some were
 * marked. {@code subtaskReset} replaces a subtask's gateway with an unmarked one, and the abort of
 * a checkpoint reaches the gateways later, through the main thread's queue; a new gateway that is
 * told of an aborted checkpoint it never saw fails as well ("unseen checkpoint"). Flink restarts
 * subtasks after a restart delay, long after such a checkpoint settled; a local recovery restarts
 * them at once, and a checkpoint triggered just before the failure was registered (found by {@code
 * ExactlyOnceITCase}: a lost TaskManager detected by a task's report while a checkpoint started)
 * killed the JobManager. With the marks carried over, the new gateway is closed and opened for that
 * checkpoint with the others. Events the old gateway held back were for the old attempt and are
 * dropped with it, as Flink drops them on a reset. The fields are private, hence reflection ({@link
 * ReflectedField}).
 */
@Internal
public final class ClonosCoordinatorGatewayPatch {

    private static final ReflectedField GATEWAYS =
            ReflectedField.of(OperatorCoordinatorHolder.class, "subtaskGatewayMap");
    private static final ReflectedField MARKS =
            ReflectedField.of(SubtaskGatewayImpl.class, "currentMarkedCheckpointIds");
    private static final ReflectedField LATEST_ATTEMPTED =
            ReflectedField.of(SubtaskGatewayImpl.class, "latestAttemptedCheckpointId");

    private ClonosCoordinatorGatewayPatch() {}

    /** {@link OperatorCoordinatorHolder#subtaskReset}, keeping the subtask's checkpoint marks. */
    public static void subtaskReset(
            OperatorCoordinatorHolder holder, int subtask, long checkpointId) {
        Map<Integer, SubtaskGatewayImpl> gateways = gateways(holder);
        SubtaskGatewayImpl old = gateways.get(subtask);
        holder.subtaskReset(subtask, checkpointId);
        SubtaskGatewayImpl replacement = gateways.get(subtask);
        if (old != null && replacement != null && replacement != old) {
            marks(replacement).addAll(marks(old));
            LATEST_ATTEMPTED.set(replacement, LATEST_ATTEMPTED.get(old));
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<Integer, SubtaskGatewayImpl> gateways(OperatorCoordinatorHolder holder) {
        return (Map<Integer, SubtaskGatewayImpl>) GATEWAYS.get(holder);
    }

    @SuppressWarnings("unchecked")
    private static TreeSet<Long> marks(SubtaskGatewayImpl gateway) {
        return (TreeSet<Long>) MARKS.get(gateway);
    }
}
