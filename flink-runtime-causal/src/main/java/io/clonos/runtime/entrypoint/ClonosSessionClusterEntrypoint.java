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
import org.apache.flink.runtime.entrypoint.ClusterEntrypoint;
import org.apache.flink.runtime.entrypoint.EntrypointClusterConfiguration;
import org.apache.flink.runtime.entrypoint.SessionClusterEntrypoint;
import org.apache.flink.runtime.entrypoint.component.DispatcherResourceManagerComponentFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JobManager process of a standalone Clonos session cluster. Takes the same arguments as
 * Flink's standalone session entrypoint ({@code --configDir}, {@code -D key=value}).
 */
@Internal
public class ClonosSessionClusterEntrypoint extends SessionClusterEntrypoint {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosSessionClusterEntrypoint.class);

    public ClonosSessionClusterEntrypoint(Configuration configuration) {
        super(ClonosClusterConfiguration.prepare(configuration));
    }

    @Override
    protected DispatcherResourceManagerComponentFactory
            createDispatcherResourceManagerComponentFactory(Configuration configuration) {
        return ClonosClusterComponents.sessionComponentFactory();
    }

    public static void main(String[] args) {
        EntrypointClusterConfiguration parsed =
                JobManagerProcess.start(
                        LOG, "Clonos JobManager", args, ClonosSessionClusterEntrypoint.class);
        ClonosSessionClusterEntrypoint entrypoint;
        try {
            entrypoint = new ClonosSessionClusterEntrypoint(loadConfiguration(parsed));
        } catch (IllegalConfigurationException e) {
            JobManagerProcess.failed(LOG, "Invalid configuration", e, STARTUP_FAILURE_RETURN_CODE);
            return;
        }
        ClusterEntrypoint.runClusterEntrypoint(entrypoint);
    }
}
