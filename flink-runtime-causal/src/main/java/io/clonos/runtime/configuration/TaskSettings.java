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

package io.clonos.runtime.configuration;

import io.clonos.runtime.configuration.ClonosOptions.DeterminantSharingHops;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;

import java.time.Duration;

/**
 * The job's Clonos settings that its tasks run with: written into every vertex's configuration
 * once, when the cluster rewrites the job at submission, and read once by each task as it starts,
 * so that a task never reads a raw key and "causal logging on" is decided in one place. The
 * TaskManager's own settings (the in-flight log's, {@code clonos.recovery.reconnect-timeout}) are
 * not here: a TaskManager owns them, and a job that sets one is refused.
 *
 * @param determinantSharingDepth {@code clonos.determinant-sharing-depth}; 0 for a job Clonos logs
 *     nothing of
 * @param determinantSharingHops {@code clonos.determinant-sharing-hops}
 * @param timeServiceGranularity {@code clonos.time-service.granularity}
 * @param determinantMemory {@code clonos.determinant.memory}
 * @param checkpointPause {@code clonos.recovery.checkpoint-pause}
 */
@Internal
public record TaskSettings(
        int determinantSharingDepth,
        DeterminantSharingHops determinantSharingHops,
        Duration timeServiceGranularity,
        MemorySize determinantMemory,
        Duration checkpointPause) {

    /** The settings of the tasks of a job with {@code clonos}; {@code logged}: Clonos covers it. */
    public static TaskSettings of(ClonosConfiguration clonos, boolean logged) {
        return new TaskSettings(
                logged ? clonos.getDeterminantSharingDepth() : 0,
                clonos.getDeterminantSharingHops(),
                clonos.getTimeServiceGranularity(),
                clonos.getDeterminantMemory(),
                clonos.getCheckpointPause());
    }

    /** The settings a vertex was given at submission, from its (task) configuration. */
    public static TaskSettings readFrom(Configuration vertexConfiguration) {
        return new TaskSettings(
                vertexConfiguration.get(ClonosOptions.DETERMINANT_SHARING_DEPTH),
                vertexConfiguration.get(ClonosOptions.DETERMINANT_SHARING_HOPS),
                vertexConfiguration.get(ClonosOptions.TIME_SERVICE_GRANULARITY),
                vertexConfiguration.get(ClonosOptions.DETERMINANT_MEMORY),
                vertexConfiguration.get(ClonosOptions.RECOVERY_CHECKPOINT_PAUSE));
    }

    /** Writes the settings into a vertex's configuration, for its tasks. */
    public void writeTo(Configuration vertexConfiguration) {
        vertexConfiguration.set(ClonosOptions.DETERMINANT_SHARING_DEPTH, determinantSharingDepth);
        vertexConfiguration.set(ClonosOptions.DETERMINANT_SHARING_HOPS, determinantSharingHops);
        vertexConfiguration.set(ClonosOptions.TIME_SERVICE_GRANULARITY, timeServiceGranularity);
        vertexConfiguration.set(ClonosOptions.DETERMINANT_MEMORY, determinantMemory);
        vertexConfiguration.set(ClonosOptions.RECOVERY_CHECKPOINT_PAUSE, checkpointPause);
    }

    /** Whether the tasks log their determinants: any sharing depth but 0. */
    public boolean causalLogging() {
        return determinantSharingDepth != 0;
    }

    /** Whether the JobManager holds checkpoints back while restarted tasks replay. */
    public boolean checkpointsWaitForReplays() {
        return !checkpointPause.isZero();
    }
}
