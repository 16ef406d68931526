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

import io.clonos.runtime.minicluster.ClonosMiniCluster;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;

import java.net.URI;
import java.util.Map;

/**
 * A Clonos cluster in this JVM for one pipeline, reached through its REST endpoint like any other.
 */
@Internal
final class EmbeddedClonosCluster implements AutoCloseable {

    private final ClonosMiniCluster cluster;
    private final String restAddress;

    private EmbeddedClonosCluster(ClonosMiniCluster cluster, String restAddress) {
        this.cluster = cluster;
        this.restAddress = restAddress;
    }

    static EmbeddedClonosCluster start(Map<String, String> settings, int taskManagers, int slots)
            throws Exception {
        Configuration config = Configuration.fromMap(settings);
        config.set(RestOptions.BIND_PORT, "0");
        ClonosMiniCluster cluster = ClonosMiniCluster.create(config, taskManagers, slots);
        cluster.start();
        URI rest = cluster.getRestAddress().get();
        return new EmbeddedClonosCluster(cluster, rest.getHost() + ":" + rest.getPort());
    }

    /** host:port of the REST endpoint. */
    String restAddress() {
        return restAddress;
    }

    @Override
    public void close() throws Exception {
        cluster.close();
    }
}
