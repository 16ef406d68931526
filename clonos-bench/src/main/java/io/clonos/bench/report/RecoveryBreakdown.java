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

package io.clonos.bench.report;

import org.apache.flink.annotation.Internal;

import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;

/**
 * Where the time between a failure and the lost keys' output went, phase by phase, so that a
 * recovery time can be read against its physical limit rather than as one number. The phases come
 * from the JobManager's record of the replacement attempts' execution states (the same clock as the
 * kill: one machine), each boundary the moment the last replacement got there (the lost keys need
 * every replaced subtask on their path), and from the output: the lost keys' first result and the
 * robust recovery. Each phase is the time from the end of the previous one; -1 where a boundary is
 * missing. The synthetic recovery benchmark and Nexmark's failure experiment both report it.
 *
 * <ul>
 *   <li>detection: the kill to the first failure the JobManager recorded;
 *   <li>restart: to the replacement attempt's creation (the restart strategy's delay, the
 *       cancellation of what restarts with it);
 *   <li>scheduling: to its deployment (slots);
 *   <li>deployment: to its initialization (submission to the TaskManager, task start);
 *   <li>restore: to running (state restore, or a standby's activation, and operator set-up);
 *   <li>replay: to the lost keys' first output (upstream in-flight logs replayed into it, or for
 *       Flink the sources' rewind, up to the first result);
 *   <li>catch-up: to the robust recovery (the backlog worked off).
 * </ul>
 */
@Internal
public record RecoveryBreakdown(Map<String, Long> phases) {

    /** The phases in order. */
    public static final List<String> PHASES =
            List.of(
                    "detection",
                    "restart",
                    "scheduling",
                    "deployment",
                    "restore",
                    "replay",
                    "catch_up");

    /**
     * The breakdown over the replacements {@code replaced}: for each execution state, when the last
     * of them entered it.
     */
    public static RecoveryBreakdown of(
            Collection<Map<String, Long>> replaced,
            long killedAt,
            long detectedAt,
            long firstOutputAt,
            long recoveredAt) {
        Map<String, Long> last = new HashMap<>();
        for (Map<String, Long> states : replaced) {
            states.forEach((state, at) -> last.merge(state, at, Math::max));
        }
        return of(last, killedAt, detectedAt, firstOutputAt, recoveredAt);
    }

    /**
     * @param states when the replacement attempt entered each execution state (Flink's names)
     * @param killedAt when the TaskManager was killed
     * @param detectedAt when the JobManager recorded the first failure, -1 if it did not
     * @param firstOutputAt when the lost keys' first result came out, -1 if unknown
     * @param recoveredAt when the robust recovery ended, -1 if unknown
     */
    public static RecoveryBreakdown of(
            Map<String, Long> states,
            long killedAt,
            long detectedAt,
            long firstOutputAt,
            long recoveredAt) {
        long[] bounds = {
            killedAt,
            detectedAt,
            states.getOrDefault("CREATED", -1L),
            states.getOrDefault("DEPLOYING", -1L),
            states.getOrDefault("INITIALIZING", -1L),
            states.getOrDefault("RUNNING", -1L),
            firstOutputAt,
            recoveredAt
        };
        Map<String, Long> phases = new LinkedHashMap<>();
        for (int i = 0; i < PHASES.size(); i++) {
            long from = bounds[i];
            long to = bounds[i + 1];
            phases.put(PHASES.get(i), from <= 0 || to <= 0 ? -1 : Math.max(0, to - from));
        }
        return new RecoveryBreakdown(phases);
    }

    /** One phase in milliseconds, -1 if unknown. */
    public long ms(String phase) {
        return phases.getOrDefault(phase, -1L);
    }

    public String json() {
        return json(this::ms);
    }

    /**
     * A breakdown as JSON, {@code {"detection_ms":...}} in the order of {@link #PHASES}, with each
     * phase's milliseconds from {@code ms}: one breakdown's, or a summary's (such as the median
     * over several runs).
     */
    public static String json(ToLongFunction<String> ms) {
        return PHASES.stream()
                .map(
                        phase ->
                                String.format(
                                        Locale.ROOT, "\"%s_ms\":%d", phase, ms.applyAsLong(phase)))
                .collect(Collectors.joining(",", "{", "}"));
    }
}
