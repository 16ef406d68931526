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

import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

import java.util.EnumMap;
import java.util.Map;

/**
 * The job's fallbacks from local recovery to Flink's global rollback, counted on the JobManager:
 * {@code clonos.globalFallbacks} in all, and {@code clonos.reason.<reason>.globalFallbacks} per
 * reason (a key/value group, so that reporters with labels report the reason as one), so that an
 * operator sees which kind of job or failure costs the rollbacks.
 */
@Internal
final class GlobalFallbackCounter {

    /** Why a failure was not recovered locally. */
    enum Reason {
        /**
         * The task cannot replay (a source that triggers its own checkpoints, not a Clonos task).
         */
        NOT_REPLAYABLE("notReplayable"),
        /** A recovering task found that it cannot be replayed (divergence, lost determinants). */
        REPLAY_IMPOSSIBLE("replayImpossible"),
        /** Every task of the job, or every task that holds what the failed ones need, was lost. */
        NO_SURVIVOR("noSurvivor"),
        /** Failed tasks in a row longer than the determinant sharing depth covers. */
        BEYOND_DSD("beyondDsd"),
        /** A producer finished on a TaskManager that is lost: its in-flight log is gone. */
        INPUT_LOST("inputLost"),
        /** Flink's restart strategy refused the restart, or Flink failed the job globally. */
        RESTART_STRATEGY("restartStrategy"),
        /** The local restart itself failed. */
        RESTART_FAILED("restartFailed");

        final String metricName;

        Reason(String metricName) {
            this.metricName = metricName;
        }
    }

    private final Counter total;
    private final Map<Reason, Counter> byReason = new EnumMap<>(Reason.class);

    GlobalFallbackCounter(MetricGroup clonos) {
        this.total = clonos.counter("globalFallbacks");
        for (Reason reason : Reason.values()) {
            byReason.put(
                    reason,
                    clonos.addGroup("reason", reason.metricName).counter("globalFallbacks"));
        }
    }

    void count(Reason reason) {
        total.inc();
        byReason.get(reason).inc();
    }

    long total() {
        return total.getCount();
    }

    long countOf(Reason reason) {
        return byReason.get(reason).getCount();
    }
}
