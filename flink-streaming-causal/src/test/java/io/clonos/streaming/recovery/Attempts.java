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

package io.clonos.streaming.recovery;

import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.executiongraph.ArchivedExecution;
import org.apache.flink.runtime.executiongraph.ErrorInfo;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The attempts of a job's subtasks, read from its execution graph after the job ended (a late
 * global rollback counts), under one spelling of a subtask's name: "chain -> sink (1/2)" is "chain
 * -> sink[0]". {@link #why} says what failed each attempt, so that a test that finds a global
 * rollback where it expected a local recovery fails with the rollback's cause.
 */
final class Attempts {

    private Attempts() {}

    /** "chain -> sink (1/2)" -> "chain -> sink[0]". */
    static String subtaskName(AccessExecutionVertex vertex) {
        String name = vertex.getTaskNameWithSubtaskIndex();
        String operator = name.substring(0, name.lastIndexOf(" ("));
        return operator + "[" + vertex.getParallelSubtaskIndex() + "]";
    }

    /** The subtasks whose current attempt is not the first. */
    static Set<String> restarted(AccessExecutionGraph graph) {
        Set<String> restarted = new TreeSet<>();
        for (AccessExecutionVertex vertex : graph.getAllExecutionVertices()) {
            if (vertex.getCurrentExecutionAttempt().getAttemptNumber() > 0) {
                restarted.add(subtaskName(vertex));
            }
        }
        return restarted;
    }

    /** Each subtask's current attempt number. */
    static Map<String, Integer> numbers(AccessExecutionGraph graph) {
        Map<String, Integer> attempts = new TreeMap<>();
        for (AccessExecutionVertex vertex : graph.getAllExecutionVertices()) {
            attempts.put(
                    subtaskName(vertex), vertex.getCurrentExecutionAttempt().getAttemptNumber());
        }
        return attempts;
    }

    /** The TaskManager (resource id) each subtask's current attempt runs or ran on. */
    static Map<String, String> locations(AccessExecutionGraph graph) {
        Map<String, String> locations = new TreeMap<>();
        for (AccessExecutionVertex vertex : graph.getAllExecutionVertices()) {
            locations.put(
                    subtaskName(vertex),
                    vertex.getCurrentAssignedResourceLocation()
                            .getResourceID()
                            .getResourceIdString());
        }
        return locations;
    }

    /** The TaskManager that runs subtask 0 of a vertex, and the subtasks it runs: its slice. */
    record Slice(String taskManager, Set<String> subtasks) {}

    /** The slice of the TaskManager that runs subtask 0 of the vertex whose name starts so. */
    static Slice sliceOf(AccessExecutionGraph graph, String vertexPrefix) {
        Map<String, String> locations = locations(graph);
        String taskManager =
                locations.entrySet().stream()
                        .filter(
                                e ->
                                        e.getKey().startsWith(vertexPrefix)
                                                && e.getKey().endsWith("[0]"))
                        .findFirst()
                        .orElseThrow(() -> new AssertionError("No subtask 0 of " + vertexPrefix))
                        .getValue();
        Set<String> subtasks = new TreeSet<>();
        locations.forEach(
                (subtask, location) -> {
                    if (location.equals(taskManager)) {
                        subtasks.add(subtask);
                    }
                });
        return new Slice(taskManager, subtasks);
    }

    /**
     * The job's last global failure and every failed attempt's cause, one line each, for an
     * assertion's description.
     */
    static String why(AccessExecutionGraph graph) {
        StringBuilder why = new StringBuilder("failures:");
        ErrorInfo global = graph.getFailureInfo();
        if (global != null) {
            why.append("\n  global: ").append(firstLines(global.getExceptionAsString()));
        }
        for (AccessExecutionVertex vertex : graph.getAllExecutionVertices()) {
            for (ArchivedExecution attempt :
                    vertex.getExecutionHistory().getHistoricalExecutions()) {
                attempt.getFailureInfo()
                        .ifPresent(
                                failure ->
                                        why.append("\n  ")
                                                .append(subtaskName(vertex))
                                                .append('#')
                                                .append(attempt.getAttemptNumber())
                                                .append(": ")
                                                .append(
                                                        firstLines(
                                                                failure.getExceptionAsString())));
            }
            vertex.getFailureInfo()
                    .ifPresent(
                            failure ->
                                    why.append("\n  ")
                                            .append(subtaskName(vertex))
                                            .append(" (current attempt): ")
                                            .append(firstLines(failure.getExceptionAsString())));
        }
        return why.toString();
    }

    /** An exception's message and the messages of its causes, without the stack frames. */
    private static String firstLines(String stackTrace) {
        StringBuilder lines = new StringBuilder();
        for (String line : stackTrace.split("\n")) {
            String trimmed = line.trim();
            if (lines.length() == 0 || trimmed.startsWith("Caused by:")) {
                lines.append(lines.length() == 0 ? "" : " / ").append(trimmed);
            }
        }
        return lines.toString();
    }
}
