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

package org.apache.flink.runtime.checkpoint;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.executiongraph.ExecutionGraph;
import org.apache.flink.runtime.executiongraph.ExecutionGraphCheckpointPlanCalculatorContext;
import org.apache.flink.runtime.executiongraph.ExecutionJobVertex;

import java.lang.reflect.Field;
import java.util.function.Predicate;
import java.util.stream.StreamSupport;

/**
 * <b>Patch of Flink's behaviour.</b> Leaves some vertices out of a job's checkpoints: Clonos's
 * standby tasks have no state, and one that is not running (no slot yet, being moved) must not keep
 * the job from checkpointing, as Flink's plan calculator would (it refuses to trigger a checkpoint
 * while any task is not running). The coordinator's plan calculator is a private final field built
 * by the execution graph; it is replaced by reflection, here only, with Flink's own calculator over
 * the other vertices.
 */
@Internal
public final class ClonosCheckpointPlanPatch {

    private ClonosCheckpointPlanPatch() {}

    public static void excludeFromCheckpoints(
            ExecutionGraph graph,
            Predicate<ExecutionJobVertex> excluded,
            boolean checkpointsAfterTasksFinish) {
        CheckpointCoordinator coordinator = graph.getCheckpointCoordinator();
        if (coordinator == null) {
            return;
        }
        Iterable<ExecutionJobVertex> included =
                () ->
                        StreamSupport.stream(graph.getVerticesTopologically().spliterator(), false)
                                .filter(excluded.negate())
                                .iterator();
        CheckpointPlanCalculator calculator =
                new DefaultCheckpointPlanCalculator(
                        graph.getJobID(),
                        new ExecutionGraphCheckpointPlanCalculatorContext(graph),
                        included,
                        checkpointsAfterTasksFinish);
        try {
            Field field = CheckpointCoordinator.class.getDeclaredField("checkpointPlanCalculator");
            field.setAccessible(true);
            field.set(coordinator, calculator);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(
                    "This Flink's CheckpointCoordinator has no plan calculator field; Clonos's patch does not fit it",
                    e);
        }
    }
}
