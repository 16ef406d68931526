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

import io.clonos.runtime.reflect.FlinkFields;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.executiongraph.ExecutionGraph;
import org.apache.flink.runtime.executiongraph.ExecutionGraphCheckpointPlanCalculatorContext;
import org.apache.flink.runtime.executiongraph.ExecutionJobVertex;

import java.util.concurrent.CompletionException;
import java.util.function.Predicate;
import java.util.stream.StreamSupport;

/**
 * <b>Patch of Flink's behaviour.</b> Replaces the checkpoint coordinator's plan calculator (a
 * private final field built by the execution graph; by reflection, here only) with Flink's own
 * calculator, changed in two ways:
 *
 * <ul>
 *   <li>It leaves some vertices out: Clonos's standby tasks have no state, and one that is not
 *       running (no slot yet, being moved) must not keep the job from checkpointing, as Flink's
 *       calculator would (it refuses to trigger a checkpoint while any task is not running).
 *   <li>It refuses a plan in which a failed attempt counts as finished. Flink's calculator takes
 *       every attempt in a terminal state for finished, and Flink never asks it while tasks wait
 *       for their restart (the job is RESTARTING and its checkpoints stopped). A local recovery
 *       keeps the job RUNNING: a checkpoint triggered before the failed tasks' new attempts exist
 *       would record them as finished, without state, and their restart from it would deploy them
 *       finished. When all the subtasks of a vertex fail together nothing waits for their barriers,
 *       so such a checkpoint would complete.
 * </ul>
 */
@Internal
public final class ClonosCheckpointPlanPatch {

    private ClonosCheckpointPlanPatch() {}

    /**
     * The plan, unless it counts an attempt that did not finish (failed, cancelled) as finished.
     */
    static CheckpointPlan noneFailed(CheckpointPlan plan) {
        for (Execution task : plan.getFinishedTasks()) {
            requireFinished(task.getState(), task.getVertexWithAttempt());
        }
        return plan;
    }

    /**
     * Refuses the checkpoint if a task the plan counts as finished is {@code state}, not finished.
     */
    static void requireFinished(ExecutionState state, String task) {
        if (state != ExecutionState.FINISHED) {
            throw new CompletionException(
                    new CheckpointException(
                            task
                                    + " is "
                                    + state
                                    + " and waits for its restart; no checkpoint until it runs",
                            CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING));
        }
    }

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
        CheckpointPlanCalculator flinks =
                new DefaultCheckpointPlanCalculator(
                        graph.getJobID(),
                        new ExecutionGraphCheckpointPlanCalculatorContext(graph),
                        included,
                        checkpointsAfterTasksFinish);
        CheckpointPlanCalculator calculator =
                () ->
                        flinks.calculateCheckpointPlan()
                                .thenApply(ClonosCheckpointPlanPatch::noneFailed);
        FlinkFields.set(
                coordinator, CheckpointCoordinator.class, "checkpointPlanCalculator", calculator);
    }
}
