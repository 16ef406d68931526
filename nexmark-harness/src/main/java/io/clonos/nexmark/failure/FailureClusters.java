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

package io.clonos.nexmark.failure;

import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;

/**
 * Where the failure experiment's systems run, and how their TaskManager is lost: embedded clusters
 * in the experiment's JVM whose TaskManager is terminated ({@link EmbeddedFailureClusters}), or
 * standalone clusters of separate processes whose TaskManager is killed with SIGKILL (the
 * distribution's: the launcher that starts processes lives there, and hands its clusters to the
 * harness's command line; the harness never looks for them).
 */
@Internal
public interface FailureClusters {

    /** The name {@code --processes} chooses it by. */
    String name();

    /** How the TaskManager is lost, for the report: "terminated" or "SIGKILL". */
    String failure();

    /**
     * Starts a cluster of Clonos ({@code onClonos}) or vanilla Flink 1.20.5 with {@code config},
     * {@code taskManagers} of {@code slots} each, its files (logs, pid files) under {@code dir}.
     */
    Cluster start(boolean onClonos, Configuration config, int taskManagers, int slots, Path dir)
            throws Exception;

    /**
     * The clusters named {@code name}: embedded, or one of {@code provided} (those of the caller,
     * the distribution's launcher).
     */
    static FailureClusters named(String name, List<FailureClusters> provided) {
        if (EmbeddedFailureClusters.NAME.equals(name)) {
            return new EmbeddedFailureClusters();
        }
        Optional<FailureClusters> found =
                provided.stream().filter(clusters -> clusters.name().equals(name)).findFirst();
        return found.orElseThrow(
                () ->
                        new IllegalArgumentException(
                                "--processes takes embedded or separate (separate needs the"
                                        + " distribution's launcher: bin/clonos nexmark), not "
                                        + name
                                        + "."));
    }

    /**
     * Fails if two of the {@code victims} (the TaskManagers of the vertex's {@code subtasks}, in
     * order) are one process: a loss meant to take several slices would take fewer.
     */
    static void requireDistinct(List<String> victims, String vertex, List<Integer> subtasks) {
        if (new HashSet<>(victims).size() < victims.size()) {
            throw new IllegalStateException(
                    "Subtasks "
                            + subtasks
                            + " of "
                            + vertex
                            + " run on TaskManagers "
                            + victims
                            + ", not one each: give each TaskManager one slot.");
        }
    }

    /**
     * TaskManagers lost together: their ids and when the first was lost (millis since the epoch).
     */
    record Lost(List<String> taskManagers, long at) {}

    /** One started cluster. */
    interface Cluster extends AutoCloseable {

        /**
         * Submits a job; the classes it needs beyond Flink's come from {@code userClasses}' jars.
         */
        JobID submit(JobGraph job, List<Class<?>> userClasses) throws Exception;

        JobStatus status(JobID job) throws Exception;

        /** Whether every subtask of the job runs; fails if the job ended. */
        boolean running(JobID job) throws Exception;

        /**
         * Loses the TaskManagers that run {@code subtasks} of the vertex named {@code vertex} (or
         * whose chain starts with it), found from one view of the job before the first is lost, so
         * that losses meant to be concurrent follow each other directly; returns which they were
         * and when the first was lost (after the lookup, which can take seconds on a loaded
         * cluster: the figures count from the loss itself).
         *
         * @throws IllegalStateException if two of the subtasks run on one TaskManager
         */
        Lost loseTaskManagersOf(JobID job, String vertex, List<Integer> subtasks) throws Exception;

        /** How many of the job's subtasks (not Clonos's standbys) ran more than one attempt. */
        int restartedSubtasks(JobID job) throws Exception;

        /** How many subtasks the job has, without Clonos's standbys. */
        int subtasks(JobID job) throws Exception;

        /** Why the job failed, as ": class: message", or empty if nothing says. */
        String cause(JobID job) throws Exception;

        /** The cluster's REST API, as Flink's web frontend reads it: exceptions, checkpoints. */
        ClusterRestClient rest();
    }
}
