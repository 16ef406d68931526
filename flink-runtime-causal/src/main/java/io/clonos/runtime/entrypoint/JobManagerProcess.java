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
import org.apache.flink.runtime.entrypoint.ClusterEntrypointUtils;
import org.apache.flink.runtime.entrypoint.EntrypointClusterConfiguration;
import org.apache.flink.runtime.entrypoint.EntrypointClusterConfigurationParserFactory;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.runtime.util.JvmShutdownSafeguard;
import org.apache.flink.runtime.util.SignalHandler;

import org.slf4j.Logger;

/**
 * What every Clonos JobManager process does around its entrypoint, as Flink's own entrypoints do:
 * the process set-up and arguments ({@code --configDir}, {@code -D key=value}) before it, and a
 * start-up failure that ends the process with a message.
 */
@Internal
final class JobManagerProcess {

    private JobManagerProcess() {}

    /** Logs the environment, installs Flink's signal and shutdown handlers, parses {@code args}. */
    static EntrypointClusterConfiguration start(
            Logger log, String description, String[] args, Class<?> entrypoint) {
        EnvironmentInformation.logEnvironmentInfo(log, description, args);
        SignalHandler.register(log);
        JvmShutdownSafeguard.installAsShutdownHook(log);
        return ClusterEntrypointUtils.parseParametersOrExit(
                args, new EntrypointClusterConfigurationParserFactory(), entrypoint);
    }

    /**
     * The entrypoint could not be created ({@code what}): says why and ends the process with
     * Flink's start-up failure code ({@code exitCode}, which only entrypoints may read).
     */
    static void failed(Logger log, String what, Exception e, int exitCode) {
        log.error("{}: {}", what, e.getMessage(), e);
        System.err.println(what + ": " + e.getMessage());
        System.exit(exitCode);
    }
}
