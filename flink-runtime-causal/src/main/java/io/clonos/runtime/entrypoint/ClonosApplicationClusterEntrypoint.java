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
package io.clonos.runtime.entrypoint;

import io.clonos.runtime.dispatcher.ClonosDispatcherFactory;

import org.apache.flink.annotation.Internal;
import org.apache.flink.client.deployment.application.ApplicationClusterEntryPoint;
import org.apache.flink.client.deployment.application.ApplicationConfiguration;
import org.apache.flink.client.deployment.application.ApplicationDispatcherLeaderProcessFactoryFactory;
import org.apache.flink.client.program.DefaultPackagedProgramRetriever;
import org.apache.flink.client.program.PackagedProgram;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.runtime.dispatcher.runner.DefaultDispatcherRunnerFactory;
import org.apache.flink.runtime.entrypoint.ClusterEntrypoint;
import org.apache.flink.runtime.entrypoint.EntrypointClusterConfiguration;
import org.apache.flink.runtime.entrypoint.component.DefaultDispatcherResourceManagerComponentFactory;
import org.apache.flink.runtime.entrypoint.component.DispatcherResourceManagerComponentFactory;
import org.apache.flink.runtime.resourcemanager.StandaloneResourceManagerFactory;
import org.apache.flink.runtime.rest.JobRestEndpointFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The JobManager process of a Clonos application cluster: the job is baked into the deployment (its
 * jar in {@code usrlib/} of the Clonos home, as in Flink's images), its main class and arguments
 * come from Flink's application keys ({@code $internal.application.main}, {@code
 * $internal.application.program-args}), and the JobManager runs its {@code main()} and the job,
 * rewritten like any job a Clonos session cluster is given. The cluster ends with the job. Takes
 * the arguments of the session entrypoint ({@code --configDir}, {@code -D key=value}).
 */
@Internal
public class ClonosApplicationClusterEntrypoint extends ApplicationClusterEntryPoint {

    private static final Logger LOG =
            LoggerFactory.getLogger(ClonosApplicationClusterEntrypoint.class);

    private final PackagedProgram program;

    public ClonosApplicationClusterEntrypoint(
            Configuration configuration, PackagedProgram program) {
        super(
                ClonosClusterConfiguration.prepare(configuration),
                program,
                StandaloneResourceManagerFactory.getInstance());
        this.program = program;
    }

    @Override
    protected DispatcherResourceManagerComponentFactory
            createDispatcherResourceManagerComponentFactory(Configuration configuration) {
        return new DefaultDispatcherResourceManagerComponentFactory(
                new DefaultDispatcherRunnerFactory(
                        ApplicationDispatcherLeaderProcessFactoryFactory.create(
                                configuration, new ClonosDispatcherFactory(), program)),
                StandaloneResourceManagerFactory.getInstance(),
                JobRestEndpointFactory.INSTANCE);
    }

    /**
     * The program of the configuration: its main class from {@code $internal.application.main},
     * found in {@code userLib} (when it exists) or on the class path.
     */
    static PackagedProgram program(Configuration configuration, Path userLib) throws Exception {
        ApplicationConfiguration application =
                ApplicationConfiguration.fromConfiguration(configuration);
        if (application.getApplicationClassName() == null) {
            throw new IllegalConfigurationException(
                    "An application cluster needs its job's main class in '"
                            + ApplicationConfiguration.APPLICATION_MAIN_CLASS.key()
                            + "'.");
        }
        File userLibDir = userLib.toFile().isDirectory() ? userLib.toFile() : null;
        return DefaultPackagedProgramRetriever.create(
                        userLibDir,
                        application.getApplicationClassName(),
                        application.getProgramArguments(),
                        configuration)
                .getPackagedProgram();
    }

    public static void main(String[] args) {
        EntrypointClusterConfiguration parsed =
                JobManagerProcess.start(
                        LOG,
                        "Clonos application JobManager",
                        args,
                        ClonosApplicationClusterEntrypoint.class);
        ClonosApplicationClusterEntrypoint entrypoint;
        try {
            Configuration configuration = loadConfiguration(parsed);
            Path home = Paths.get(System.getProperty("clonos.home", "."));
            PackagedProgram program = program(configuration, home.resolve("usrlib"));
            configureExecution(configuration, program);
            entrypoint = new ClonosApplicationClusterEntrypoint(configuration, program);
        } catch (Exception e) {
            JobManagerProcess.failed(
                    LOG,
                    "Could not create the application cluster",
                    e,
                    STARTUP_FAILURE_RETURN_CODE);
            return;
        }
        ClusterEntrypoint.runClusterEntrypoint(entrypoint);
    }
}
