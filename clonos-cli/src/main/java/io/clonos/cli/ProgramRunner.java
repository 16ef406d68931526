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

import io.clonos.runtime.configuration.ClonosOptions;

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
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Runs an unchanged Flink job jar against a Clonos cluster the way {@code flink run} does: the
 * jar's main method builds the job with a context environment whose executor submits it over
 * Flink's REST API (jar upload and job submission), attached or detached. Jars the job needs
 * besides its own and the cluster's are URLs in {@code pipeline.classpaths} ({@code -D}), which
 * every node must reach, as with {@code flink run -C}.
 */
@Internal
public final class ProgramRunner {

    private ProgramRunner() {}

    /**
     * The configuration a job is submitted with: the client's, without the {@code clonos.} keys
     * that only its configuration file holds. The file's Clonos settings are the cluster's (the
     * cluster reads its own copy, and a cluster started with {@code -D} overrides differs from it),
     * so a job carries a Clonos setting only where it set one: a {@code -D} of the run command
     * ({@code setOnCommandLine}) or its own code. Flink's keys stay, as {@code flink run} passes
     * them.
     */
    static Configuration jobConfiguration(Configuration client, Set<String> setOnCommandLine) {
        Configuration job = new Configuration(client);
        for (String key : client.keySet()) {
            if (key.startsWith(ClonosOptions.PREFIX) && !setOnCommandLine.contains(key)) {
                job.removeKey(key);
            }
        }
        return job;
    }

    /** Runs the jar's program: its manifest's main class, or {@code entryClass} when given. */
    public static void run(
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

        // jars of the job's own that the cluster's lib/ lacks (a connector), as Flink's -C gives
        List<URL> classpaths = new ArrayList<>();
        for (String url : config.get(PipelineOptions.CLASSPATHS, List.of())) {
            classpaths.add(new URL(url));
        }
        PackagedProgram program =
                PackagedProgram.newBuilder()
                        .setJarFile(jar)
                        .setUserClassPaths(classpaths)
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
