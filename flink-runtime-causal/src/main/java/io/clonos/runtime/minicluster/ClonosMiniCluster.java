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

package io.clonos.runtime.minicluster;

import io.clonos.runtime.entrypoint.ClonosClusterComponents;
import io.clonos.runtime.entrypoint.ClonosClusterConfiguration;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.entrypoint.component.DispatcherResourceManagerComponentFactory;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;

/**
 * An embedded Clonos cluster: Flink's {@link MiniCluster} (real JobManager, TaskManagers, Netty
 * network and checkpoint coordinator in this JVM) with Clonos's dispatcher and shuffle service.
 */
@PublicEvolving
public class ClonosMiniCluster extends MiniCluster {

    public ClonosMiniCluster(MiniClusterConfiguration configuration) {
        super(prepare(configuration));
    }

    /** A cluster of {@code taskManagers} TaskManagers with {@code slots} slots each. */
    public static ClonosMiniCluster create(
            Configuration configuration, int taskManagers, int slots) {
        return new ClonosMiniCluster(
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(configuration)
                        .setNumTaskManagers(taskManagers)
                        .setNumSlotsPerTaskManager(slots)
                        .build());
    }

    /**
     * Applies the Clonos cluster configuration. A common bind address given to the builder is not
     * carried over; set {@code jobmanager.bind-host} and {@code taskmanager.bind-host} instead.
     */
    private static MiniClusterConfiguration prepare(MiniClusterConfiguration configuration) {
        return new MiniClusterConfiguration(
                ClonosClusterConfiguration.prepare(configuration.getConfiguration()),
                configuration.getNumTaskManagers(),
                configuration.getRpcServiceSharing(),
                null,
                configuration.getHaServices(),
                configuration.getPluginManager());
    }

    @Override
    protected DispatcherResourceManagerComponentFactory
            createDispatcherResourceManagerComponentFactory() {
        return ClonosClusterComponents.sessionComponentFactory();
    }
}
