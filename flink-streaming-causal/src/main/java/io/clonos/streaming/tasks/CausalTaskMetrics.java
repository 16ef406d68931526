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

package io.clonos.streaming.tasks;

import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.DeterminantEncoding;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * The causal log's metrics of a task, in its {@code clonos} group: what an operator watches to see
 * the determinants' cost (bytes, memory, waits) and where a recovery stands. The names are what
 * dashboards and metric reporters select by (docs/operations.md lists them).
 */
@PublicEvolving
public final class CausalTaskMetrics {

    /** The gauge of the bytes of determinants the task has logged. */
    public static final String DETERMINANT_BYTES = "determinantBytes";

    /** The group of {@code determinantBytes} per kind of determinant, one gauge per kind. */
    public static final String DETERMINANT_BYTES_BY_KIND = "determinantBytesByKind";

    private CausalTaskMetrics() {}

    static void register(MetricGroup group, CausalTask causal) {
        group.gauge(DETERMINANT_BYTES, (Gauge<Long>) () -> causal.log().totalBytes());
        MetricGroup byKind = group.addGroup(DETERMINANT_BYTES_BY_KIND);
        for (String kind : DeterminantEncoding.KINDS) {
            byKind.gauge(kind, (Gauge<Long>) () -> causal.log().totalBytes(kind));
        }
        group.gauge("recoveryState", (Gauge<String>) () -> causal.recovery().state().name());
        group.gauge("determinantMemoryUsed", (Gauge<Long>) () -> causal.log().memory().usedBytes());
        group.gauge(
                "determinantMemoryWaitMs",
                (Gauge<Long>) () -> causal.log().memory().waitedMillis());
    }
}
