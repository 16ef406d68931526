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

package io.clonos.cli;

import org.apache.flink.annotation.Internal;
import org.apache.flink.client.ClientUtils;
import org.apache.flink.client.deployment.executors.RemoteExecutor;
import org.apache.flink.client.program.PackagedProgram;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.core.execution.DefaultExecutorServiceLoader;

import javax.annotation.Nullable;

import java.io.File;
import java.util.List;

/**
 * Runs an unchanged Flink job jar against a Clonos cluster the way {@code flink run} does: the
 * jar's main method builds the job with a context environment whose executor submits it over
 * Flink's REST API (jar upload and job submission), attached or detached.
 */
@Internal
final class ProgramRunner {

    private ProgramRunner() {}

    /** Runs the jar's program: its manifest's main class, or {@code entryClass} when given. */
    static void run(
            Configuration clusterConfig,
            boolean detached,
            File jar,
            @Nullable String entryClass,
            String[] args)
            throws Exception {
        if (!jar.isFile()) {
            throw new IllegalArgumentException("No job jar at " + jar);
        }
        Configuration config = new Configuration(clusterConfig);
        config.set(DeploymentOptions.TARGET, RemoteExecutor.NAME);
        config.set(DeploymentOptions.ATTACHED, !detached);
        config.set(PipelineOptions.JARS, List.of(jar.toURI().toURL().toString()));

        PackagedProgram program =
                PackagedProgram.newBuilder()
                        .setJarFile(jar)
                        .setEntryPointClassName(entryClass)
                        .setArguments(args)
                        .setConfiguration(config)
                        .build();
        try {
            ClientUtils.executeProgram(
                    new DefaultExecutorServiceLoader(), config, program, false, false);
        } finally {
            program.close();
        }
    }
}
