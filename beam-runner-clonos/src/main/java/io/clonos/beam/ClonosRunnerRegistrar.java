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

package io.clonos.beam;

import org.apache.beam.sdk.PipelineRunner;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsRegistrar;
import org.apache.beam.sdk.runners.PipelineRunnerRegistrar;

import java.util.List;

/**
 * Registers {@link ClonosRunner} and its options with Beam: {@code --runner=ClonosRunner} works by
 * name.
 */
public final class ClonosRunnerRegistrar {

    private ClonosRunnerRegistrar() {}

    /** The runner. */
    public static final class Runner implements PipelineRunnerRegistrar {
        @Override
        public Iterable<Class<? extends PipelineRunner<?>>> getPipelineRunners() {
            return List.<Class<? extends PipelineRunner<?>>>of(ClonosRunner.class);
        }
    }

    /** Its options. */
    public static final class Options implements PipelineOptionsRegistrar {
        @Override
        public Iterable<Class<? extends PipelineOptions>> getPipelineOptions() {
            return List.<Class<? extends PipelineOptions>>of(ClonosPipelineOptions.class);
        }
    }
}
