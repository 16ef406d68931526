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

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.runtime.taskexecutor.TaskManagerRunner;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.runtime.util.JvmShutdownSafeguard;
import org.apache.flink.runtime.util.SignalHandler;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TaskManager process of a standalone Clonos cluster: Flink's TaskManager, started with the
 * Clonos cluster configuration. Takes the same arguments as Flink's ({@code --configDir}, {@code -D
 * key=value}).
 */
@Internal
public final class ClonosTaskManagerRunner {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosTaskManagerRunner.class);

    public static void main(String[] args) throws Exception {
        EnvironmentInformation.logEnvironmentInfo(LOG, "Clonos TaskManager", args);
        SignalHandler.register(LOG);
        JvmShutdownSafeguard.installAsShutdownHook(LOG);

        Configuration configuration;
        try {
            configuration =
                    ClonosClusterConfiguration.prepare(TaskManagerRunner.loadConfiguration(args));
        } catch (IllegalConfigurationException e) {
            LOG.error("Invalid configuration: {}", e.getMessage());
            System.err.println("Invalid configuration: " + e.getMessage());
            System.exit(TaskManagerRunner.FAILURE_EXIT_CODE);
            return;
        }
        TaskManagerRunner.runTaskManagerProcessSecurely(configuration);
    }

    private ClonosTaskManagerRunner() {}
}
