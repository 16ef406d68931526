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

import io.clonos.runtime.reflect.ReflectedField;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.executiongraph.ExecutionGraph;
import org.apache.flink.runtime.executiongraph.ExecutionGraphCheckpointPlanCalculatorContext;
import org.apache.flink.runtime.executiongraph.ExecutionJobVertex;
import org.apache.flink.runtime.executiongraph.ExecutionVertex;
import org.apache.flink.runtime.jobgraph.ClonosChainedSourcesPatch;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.function.Predicate;
import java.util.stream.StreamSupport;

/**
 * <b>Patch of Flink's behaviour.</b> Replaces the checkpoint coordinator's plan calculator (a
 * private final field built by the execution graph; by reflection, here only) with Flink's own
 * calculator, changed in these ways:
 *
 * <ul>
 *   <li>It triggers the tasks that chain sources to an operator whose other inputs come through the
 *       network. Flink triggers only vertices without inputs, so the sources of such a task never
 *       see a checkpoint and its checkpoints never complete (on Flink as well); a chained source's
 *       checkpoint starts with its trigger, the task's once its network inputs are aligned too.
 *   <li>It leaves some vertices out: Clonos's standby tasks have no state, and one that is not
 *       running (no slot yet, being moved) must not keep the job from checkpointing, as Flink's
 *       calculator would (it refuses to trigger a checkpoint while any task is not running).
 *   <li>It refuses a plan in which a failed attempt counts as finished. Flink's calculator takes
 *       every attempt in a terminal state for finished, and Flink never asks it while tasks wait
 *       for their restart (the job is RESTARTING and its checkpoints stopped). A local recovery
 *       keeps the job RUNNING: a checkpoint triggered before the failed tasks' new attempts exist
 *       would record them as finished, without state, and their restart from it would deploy them
 *       finished. When all the subtasks of a vertex fail together nothing waits for their barriers,
 *       so such a checkpoint would complete; and once any task of the job has finished, Flink's
 *       calculator triggers the consumers of a task it counts as finished in that task's place, so
 *       it would complete too.
 * </ul>
 */
@Internal
public final class ClonosCheckpointPlanPatch {

    private static final ReflectedField PLAN_CALCULATOR =
            ReflectedField.of(CheckpointCoordinator.class, "checkpointPlanCalculator");

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

    /** The plan, with the running tasks of {@code chainingSources} among those it triggers. */
    static CheckpointPlan triggering(
            CheckpointPlan plan, List<ExecutionJobVertex> chainingSources) {
        if (chainingSources.isEmpty()) {
            return plan;
        }
        List<Execution> trigger = new ArrayList<>(plan.getTasksToTrigger());
        Set<Execution> finished = new HashSet<>(plan.getFinishedTasks());
        for (ExecutionJobVertex vertex : chainingSources) {
            for (ExecutionVertex task : vertex.getTaskVertices()) {
                Execution attempt = task.getCurrentExecutionAttempt();
                if (finished.contains(attempt) || trigger.contains(attempt)) {
                    continue;
                }
                if (attempt.getState() != ExecutionState.RUNNING) {
                    // as Flink refuses a checkpoint while a task it triggers is not running
                    throw new CompletionException(
                            new CheckpointException(
                                    attempt.getVertexWithAttempt()
                                            + " chains sources and is "
                                            + attempt.getState(),
                                    CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING));
                }
                trigger.add(attempt);
            }
        }
        return new DefaultCheckpointPlan(
                trigger,
                plan.getTasksToWaitFor(),
                plan.getTasksToCommitTo(),
                plan.getFinishedTasks(),
                new ArrayList<>(plan.getFullyFinishedJobVertex()),
                plan.mayHaveFinishedTasks());
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

    /**
     * Puts this calculator in place of Flink's for every job that checkpoints: a local recovery
     * keeps any job running while its failed tasks wait, and once a task of the job finished,
     * Flink's calculator counts those failed attempts as finished. With standbys, {@code excluded}
     * are left out.
     */
    public static void install(
            ExecutionGraph graph,
            boolean standbys,
            Predicate<ExecutionJobVertex> excluded,
            boolean checkpointsAfterTasksFinish) {
        CheckpointCoordinator coordinator = graph.getCheckpointCoordinator();
        List<ExecutionJobVertex> chainingSources = new ArrayList<>();
        for (ExecutionJobVertex vertex : graph.getVerticesTopologically()) {
            if (!vertex.getJobVertex().isInputVertex()
                    && ClonosChainedSourcesPatch.chainsSources(vertex.getJobVertex())) {
                chainingSources.add(vertex);
            }
        }
        if (coordinator == null) {
            return;
        }
        Predicate<ExecutionJobVertex> left = standbys ? excluded : vertex -> false;
        Iterable<ExecutionJobVertex> included =
                () ->
                        StreamSupport.stream(graph.getVerticesTopologically().spliterator(), false)
                                .filter(left.negate())
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
                                .thenApply(ClonosCheckpointPlanPatch::noneFailed)
                                .thenApply(plan -> triggering(plan, chainingSources));
        PLAN_CALCULATOR.set(coordinator, calculator);
    }
}
