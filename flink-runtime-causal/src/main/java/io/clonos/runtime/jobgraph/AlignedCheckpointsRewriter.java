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

package io.clonos.runtime.jobgraph;

import io.clonos.runtime.configuration.ClonosConfiguration;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.tasks.CheckpointCoordinatorConfiguration;
import org.apache.flink.runtime.jobgraph.tasks.JobCheckpointingSettings;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns unaligned checkpoints off on the checkpoint coordinator. Epochs are delimited by barriers:
 * an unaligned barrier overtakes buffers, so the in-flight log and the causal log of an epoch would
 * no longer end where the checkpoint's state does. (The tasks' side of the same setting is
 * rewritten with the stream tasks.)
 */
@Internal
public final class AlignedCheckpointsRewriter implements JobGraphRewriter {

    private static final Logger LOG = LoggerFactory.getLogger(AlignedCheckpointsRewriter.class);

    @Override
    public void rewrite(
            JobGraph jobGraph, ClonosConfiguration clonos, ClassLoader userCodeClassLoader) {
        JobCheckpointingSettings settings = jobGraph.getCheckpointingSettings();
        if (settings == null
                || !settings.getCheckpointCoordinatorConfiguration()
                        .isUnalignedCheckpointsEnabled()) {
            return;
        }
        LOG.warn(
                "Job {} ({}) asked for unaligned checkpoints; Clonos runs it with aligned checkpoints.",
                jobGraph.getName(),
                jobGraph.getJobID());
        CheckpointCoordinatorConfiguration c = settings.getCheckpointCoordinatorConfiguration();
        CheckpointCoordinatorConfiguration aligned =
                CheckpointCoordinatorConfiguration.builder()
                        .setCheckpointInterval(c.getCheckpointInterval())
                        .setCheckpointIntervalDuringBacklog(c.getCheckpointIntervalDuringBacklog())
                        .setCheckpointTimeout(c.getCheckpointTimeout())
                        .setMinPauseBetweenCheckpoints(c.getMinPauseBetweenCheckpoints())
                        .setMaxConcurrentCheckpoints(c.getMaxConcurrentCheckpoints())
                        .setCheckpointRetentionPolicy(c.getCheckpointRetentionPolicy())
                        .setExactlyOnce(c.isExactlyOnce())
                        .setTolerableCheckpointFailureNumber(
                                c.getTolerableCheckpointFailureNumber())
                        .setUnalignedCheckpointsEnabled(false)
                        .setAlignedCheckpointTimeout(0)
                        .setCheckpointIdOfIgnoredInFlightData(
                                c.getCheckpointIdOfIgnoredInFlightData())
                        .setEnableCheckpointsAfterTasksFinish(
                                c.isEnableCheckpointsAfterTasksFinish())
                        .build();
        jobGraph.setSnapshotSettings(
                new JobCheckpointingSettings(
                        aligned,
                        settings.getDefaultStateBackend(),
                        settings.isChangelogStateBackendEnabled(),
                        settings.getDefaultCheckpointStorage(),
                        settings.getMasterHooks()));
    }
}
