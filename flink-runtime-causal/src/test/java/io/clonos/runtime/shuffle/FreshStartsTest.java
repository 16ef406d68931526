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

package io.clonos.runtime.shuffle;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The JobManager's marks of the attempts that start afresh. */
class FreshStartsTest {

    @Test
    void theShuffleMasterMarksThePartitionsOfMarkedAttemptsOfItsJobsOnly() throws Exception {
        ClonosShuffleMaster master =
                new ClonosShuffleMaster(
                        new org.apache.flink.runtime.shuffle.NettyShuffleMaster(
                                new org.apache.flink.runtime.shuffle.ShuffleMasterContextImpl(
                                        new org.apache.flink.configuration.Configuration(),
                                        error -> {})));
        org.apache.flink.api.common.JobID job = new org.apache.flink.api.common.JobID();
        org.apache.flink.runtime.executiongraph.ExecutionAttemptID attempt =
                org.apache.flink.runtime.executiongraph.ExecutionAttemptID.randomId();
        master.freshStarts().mark(job, attempt.getExecutionVertexId(), attempt.getAttemptNumber());

        assertThat(master.freshStarts().isMarked(job, attempt)).isTrue();
        assertThat(master.freshStarts().isMarked(new org.apache.flink.api.common.JobID(), attempt))
                .as("another job")
                .isFalse();
        assertThat(new ClonosShuffleMaster(null).freshStarts().isMarked(job, attempt))
                .as("another JobManager")
                .isFalse();
        master.unregisterJob(job);
        assertThat(master.freshStarts().isMarked(job, attempt))
                .as("forgotten with its job")
                .isFalse();
    }
}
