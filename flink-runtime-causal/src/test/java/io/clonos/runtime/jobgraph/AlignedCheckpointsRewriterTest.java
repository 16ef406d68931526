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

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.checkpoint.CheckpointRetentionPolicy;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobGraphBuilder;
import org.apache.flink.runtime.jobgraph.tasks.CheckpointCoordinatorConfiguration;
import org.apache.flink.runtime.jobgraph.tasks.JobCheckpointingSettings;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class AlignedCheckpointsRewriterTest {

    private static final ClonosConfiguration CLONOS =
            ClonosConfiguration.fromConfiguration(new Configuration());

    @Test
    void turnsUnalignedCheckpointsOffAndKeepsEverythingElse() {
        CheckpointCoordinatorConfiguration unaligned =
                CheckpointCoordinatorConfiguration.builder()
                        .setCheckpointInterval(1234)
                        .setCheckpointTimeout(60_000)
                        .setMinPauseBetweenCheckpoints(17)
                        .setMaxConcurrentCheckpoints(1)
                        .setCheckpointRetentionPolicy(
                                CheckpointRetentionPolicy.RETAIN_ON_CANCELLATION)
                        .setTolerableCheckpointFailureNumber(3)
                        .setUnalignedCheckpointsEnabled(true)
                        .setAlignedCheckpointTimeout(100)
                        .setEnableCheckpointsAfterTasksFinish(true)
                        .build();
        JobGraph jobGraph =
                JobGraphBuilder.newStreamingJobGraphBuilder()
                        .setJobCheckpointingSettings(new JobCheckpointingSettings(unaligned, null))
                        .build();

        new AlignedCheckpointsRewriter().rewrite(jobGraph, CLONOS, getClass().getClassLoader());

        CheckpointCoordinatorConfiguration rewritten =
                jobGraph.getCheckpointingSettings().getCheckpointCoordinatorConfiguration();
        assertThat(rewritten.isUnalignedCheckpointsEnabled()).isFalse();
        assertThat(rewritten.getCheckpointInterval()).isEqualTo(1234);
        assertThat(rewritten.getMinPauseBetweenCheckpoints()).isEqualTo(17);
        assertThat(rewritten.getCheckpointRetentionPolicy())
                .isEqualTo(CheckpointRetentionPolicy.RETAIN_ON_CANCELLATION);
        assertThat(rewritten.getTolerableCheckpointFailureNumber()).isEqualTo(3);
        assertThat(rewritten.isEnableCheckpointsAfterTasksFinish()).isTrue();
    }

    @Test
    void leavesAlignedCheckpointingAlone() {
        CheckpointCoordinatorConfiguration aligned =
                CheckpointCoordinatorConfiguration.builder().setCheckpointInterval(500).build();
        JobCheckpointingSettings settings = new JobCheckpointingSettings(aligned, null);
        JobGraph jobGraph =
                JobGraphBuilder.newStreamingJobGraphBuilder()
                        .setJobCheckpointingSettings(settings)
                        .build();

        new AlignedCheckpointsRewriter().rewrite(jobGraph, CLONOS, getClass().getClassLoader());

        assertThat(jobGraph.getCheckpointingSettings()).isSameAs(settings);
    }
}
