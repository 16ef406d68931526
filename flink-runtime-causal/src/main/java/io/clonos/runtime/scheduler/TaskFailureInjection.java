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

package io.clonos.runtime.scheduler;

import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.configuration.ClonosOptions;
import io.clonos.runtime.protocol.FailTaskRequest;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.executiongraph.ExecutionJobVertex;
import org.apache.flink.util.FlinkException;

import org.slf4j.Logger;

import java.util.Collection;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Failure experiments ({@code bin/clonos fail}, {@link FailTaskRequest}): fails one running task
 * the way a crash of its code would, so that the scheduler's ordinary failover handles it. The user
 * names a vertex as the web UI shows it or by one of the operators chained in it.
 */
@Internal
final class TaskFailureInjection {

    private TaskFailureInjection() {}

    /**
     * Fails the requested subtask's current attempt; it must be running, and the job's settings
     * must allow it ({@code clonos.fault-injection.enabled}): the request comes over Flink's REST
     * API, from whoever reaches it.
     */
    static FailTaskRequest.Response fail(
            ClonosConfiguration settings,
            Collection<ExecutionJobVertex> vertices,
            FailTaskRequest request,
            Logger log)
            throws FlinkException {
        if (!settings.isFailOnRequestEnabled()) {
            throw new FlinkException(
                    "Failing tasks on request is off for this job: set "
                            + ClonosOptions.FAULT_INJECTION_ENABLED.key()
                            + ": true in the cluster's or the job's configuration to allow it.");
        }
        ExecutionJobVertex vertex =
                named(vertices, ExecutionJobVertex::getName, request.getVertex());
        if (request.getSubtask() < 0 || request.getSubtask() >= vertex.getParallelism()) {
            throw new FlinkException(
                    "Vertex '"
                            + vertex.getName()
                            + "' has subtasks 0 to "
                            + (vertex.getParallelism() - 1)
                            + ", not "
                            + request.getSubtask());
        }
        Execution execution =
                vertex.getTaskVertices()[request.getSubtask()].getCurrentExecutionAttempt();
        if (execution.getState() != ExecutionState.RUNNING) {
            throw new FlinkException(
                    execution.getVertex().getTaskNameWithSubtaskIndex()
                            + " is "
                            + execution.getState()
                            + ", not RUNNING");
        }
        log.info("Failing {} on request.", execution.getVertex().getTaskNameWithSubtaskIndex());
        execution.fail(new FlinkException("Failed on request (clonos fail)"));
        return new FailTaskRequest.Response(
                "Failed "
                        + execution.getVertex().getTaskNameWithSubtaskIndex()
                        + " (attempt "
                        + execution.getAttemptNumber()
                        + ")");
    }

    /** The first vertex that {@code requested} names; the error lists the job's vertices. */
    static <V> V named(Collection<V> vertices, Function<V, String> nameOf, String requested)
            throws FlinkException {
        for (V vertex : vertices) {
            if (namesOperator(nameOf.apply(vertex), requested)) {
                return vertex;
            }
        }
        throw new FlinkException(
                "No vertex '"
                        + requested
                        + "'; the job has: "
                        + vertices.stream().map(nameOf).collect(Collectors.toList()));
    }

    /**
     * A vertex named "Source: a -> b" names the operators "a" and "b", and itself; one named "c
     * [Source: d, Source: e] -> f", whose operator c has the sources d and e chained to it, names
     * "c" and "f".
     */
    static boolean namesOperator(String vertexName, String name) {
        if (vertexName.equals(name)) {
            return true;
        }
        for (String operator : vertexName.split(" -> ")) {
            String bare =
                    operator.replaceFirst(" \\[.*]$", "").replaceFirst("^(Source|Sink): ", "");
            if (operator.equals(name) || bare.equals(name)) {
                return true;
            }
        }
        return false;
    }
}
