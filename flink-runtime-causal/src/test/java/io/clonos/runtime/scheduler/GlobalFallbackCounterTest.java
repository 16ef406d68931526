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

package io.clonos.runtime.scheduler;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class GlobalFallbackCounterTest {

    @Test
    void eachFallbackCountsInAllAndForItsReason() {
        GlobalFallbackCounter fallbacks = new GlobalFallbackCounter(new UnregisteredMetricsGroup());
        fallbacks.count(GlobalFallbackCounter.Reason.BEYOND_DSD);
        fallbacks.count(GlobalFallbackCounter.Reason.BEYOND_DSD);
        fallbacks.count(GlobalFallbackCounter.Reason.NOT_REPLAYABLE);

        assertThat(fallbacks.total()).isEqualTo(3);
        assertThat(fallbacks.countOf(GlobalFallbackCounter.Reason.BEYOND_DSD)).isEqualTo(2);
        assertThat(fallbacks.countOf(GlobalFallbackCounter.Reason.NOT_REPLAYABLE)).isEqualTo(1);
        assertThat(fallbacks.countOf(GlobalFallbackCounter.Reason.NO_SURVIVOR)).isZero();
    }

    /** The counters are registered under the names the documentation gives. */
    @Test
    void theReasonIsAKeyValueGroupOfTheClonosGroup() {
        List<String> registered = new ArrayList<>();
        new GlobalFallbackCounter(new NamingGroup("clonos", registered));
        assertThat(registered)
                .contains(
                        "clonos.globalFallbacks",
                        "clonos.reason.beyondDsd.globalFallbacks",
                        "clonos.reason.notReplayable.globalFallbacks",
                        "clonos.reason.replayImpossible.globalFallbacks",
                        "clonos.reason.noSurvivor.globalFallbacks",
                        "clonos.reason.restartStrategy.globalFallbacks",
                        "clonos.reason.restartFailed.globalFallbacks")
                .hasSize(GlobalFallbackCounter.Reason.values().length + 1);
    }

    /** Records the identifier of each metric registered under it. */
    private static final class NamingGroup extends UnregisteredMetricsGroup {
        private final String prefix;
        private final List<String> registered;

        NamingGroup(String prefix, List<String> registered) {
            this.prefix = prefix;
            this.registered = registered;
        }

        @Override
        public Counter counter(String name) {
            registered.add(prefix + "." + name);
            return super.counter(name);
        }

        @Override
        public <C extends Counter> C counter(String name, C counter) {
            registered.add(prefix + "." + name);
            return counter;
        }

        @Override
        public MetricGroup addGroup(String key, String value) {
            return new NamingGroup(prefix + "." + key + "." + value, registered);
        }

        @Override
        public MetricGroup addGroup(String name) {
            return new NamingGroup(prefix + "." + name, registered);
        }
    }
}
