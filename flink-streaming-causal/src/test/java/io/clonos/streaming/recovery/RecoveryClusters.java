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

package io.clonos.streaming.recovery;

import io.clonos.runtime.minicluster.ClonosMiniCluster;

import org.apache.flink.configuration.ClusterOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;

import java.time.Duration;

/**
 * The embedded cluster the recovery tests run on: slots spread over the TaskManagers (so that a
 * lost TaskManager is a slice of the job, as in production), a free REST port, and a restart
 * strategy that restarts at once, so that a test waits for the recovery, not for back-off.
 */
final class RecoveryClusters {

    private RecoveryClusters() {}

    /**
     * Starts a cluster of {@code taskManagers} with {@code slots} each, allowing {@code restarts}
     * restarts; {@code config} adds to (or overrides) these settings.
     */
    static ClonosMiniCluster start(Configuration config, int taskManagers, int slots, int restarts)
            throws Exception {
        Configuration merged = new Configuration();
        merged.set(RestOptions.BIND_PORT, "0");
        merged.set(ClusterOptions.EVENLY_SPREAD_OUT_SLOTS_STRATEGY, true);
        merged.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        merged.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, restarts);
        merged.set(
                RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        // the tests fail tasks on request (FailTaskRequest)
        merged.setString("clonos.fault-injection.enabled", "true");
        merged.addAll(config);
        ClonosMiniCluster cluster = ClonosMiniCluster.create(merged, taskManagers, slots);
        cluster.start();
        return cluster;
    }
}
