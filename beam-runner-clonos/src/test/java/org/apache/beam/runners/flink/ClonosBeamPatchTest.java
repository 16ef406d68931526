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

package org.apache.beam.runners.flink;

import org.apache.beam.sdk.PipelineRunner;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Beam patch on the Beam this build uses: options that name it make the Clonos runner, which it
 * finds among the registered runners, and the private fields it reads are where it looks.
 */
class ClonosBeamPatchTest {

    @Test
    void optionsNamingThePatchMakeTheClonosRunnerAndKeepNamingThePatch() {
        PipelineOptions options = PipelineOptionsFactory.create();
        options.setRunner(ClonosBeamPatch.class);

        PipelineRunner<?> runner = PipelineRunner.fromOptions(options);

        assertThat(runner.getClass().getName()).isEqualTo("io.clonos.beam.ClonosRunner");
        assertThat(options.getRunner())
                .as("the runner Beam makes at run, for the Kafka sink's check")
                .isEqualTo(ClonosBeamPatch.class);
    }

    @Test
    void aRandomKeyReshufflesBucketCountIsRead() throws ReflectiveOperationException {
        assertThat(ClonosBeamPatch.reshuffleBuckets(new Reshuffle.AssignShardFn<String>(7)))
                .isEqualTo(7);
        assertThat(ClonosBeamPatch.reshuffleBuckets(new Reshuffle.AssignShardFn<String>(null)))
                .isNull();
    }
}
