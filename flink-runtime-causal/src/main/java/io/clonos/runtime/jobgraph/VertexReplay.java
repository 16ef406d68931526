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
package io.clonos.runtime.jobgraph;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;

import java.util.Optional;

/**
 * Whether a vertex's tasks can be recovered by determinants, as the cluster-side rewriting of the
 * job found out (it knows the tasks and operators; the scheduler that acts on a failure does not).
 * A task that cannot replay would, restarted alone, redo its work with other choices than its
 * predecessor made and that its consumers already saw: the scheduler rolls back globally.
 *
 * <p>Carried in the vertex configuration under an internal key, which users do not set.
 */
@Internal
public final class VertexReplay {

    static final ConfigOption<String> NOT_REPLAYABLE_BECAUSE =
            ConfigOptions.key("clonos.internal.not-replayable-because")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Internal: why the vertex's tasks cannot be recovered by determinants.");

    static final ConfigOption<String> UNLOGGED_BECAUSE =
            ConfigOptions.key("clonos.internal.unlogged-because")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Internal: why Clonos logs nothing for the vertex's tasks, so that"
                                    + " their failures are Flink's to handle.");

    static final ConfigOption<Boolean> DETERMINANTS_HELD_BY_SINK =
            ConfigOptions.key("clonos.internal.determinants-held-by-sink")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Internal: the vertex's chain ends in a sink that stores the task's"
                                    + " determinants beside its output and answers its recovery.");

    private VertexReplay() {}

    /**
     * The vertex's chain has a sink that stores its task's determinants beside its output, and
     * reads them back when the task recovers: the recovery waits for that sink's answer too.
     */
    public static void markDeterminantsHeldBySink(Configuration vertexConfiguration) {
        vertexConfiguration.set(DETERMINANTS_HELD_BY_SINK, true);
    }

    /** Whether a sink of the vertex's chain holds its task's determinants. */
    public static boolean determinantsHeldBySink(Configuration vertexConfiguration) {
        return vertexConfiguration.get(DETERMINANTS_HELD_BY_SINK);
    }

    public static void markNotReplayable(Configuration vertexConfiguration, String why) {
        vertexConfiguration.set(NOT_REPLAYABLE_BECAUSE, why);
    }

    /**
     * Clonos logs nothing for the vertex's tasks (no determinants, no in-flight log), because of
     * {@code why}: a failure of one of them is handled as Flink would, by the job's restart
     * strategy.
     */
    public static void markUnlogged(Configuration vertexConfiguration, String why) {
        vertexConfiguration.set(UNLOGGED_BECAUSE, why);
    }

    /** Why Clonos logs nothing for the vertex's tasks; empty when it logs. */
    public static Optional<String> whyUnlogged(Configuration vertexConfiguration) {
        return vertexConfiguration.getOptional(UNLOGGED_BECAUSE);
    }

    /** Why the vertex's tasks cannot be recovered by determinants; empty when they can. */
    public static Optional<String> whyNotReplayable(Configuration vertexConfiguration) {
        return vertexConfiguration.getOptional(NOT_REPLAYABLE_BECAUSE);
    }
}
