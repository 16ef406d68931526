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
package org.apache.flink.runtime.jobgraph;

import io.clonos.runtime.reflect.ReflectedField;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.runtime.OperatorIDPair;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;

/**
 * <b>Patch of Flink's behaviour.</b> Flink 1.20's job graph generator leaves the sources it chains
 * to an operator of several inputs out of the vertex's operators (FLINK-30901 describes the same
 * omission for another property), and the checkpoint coordinator keeps only the state of a vertex's
 * operators: such a source's reader positions never reach a checkpoint, and after any restore,
 * Flink's global one included, the source starts from what its enumerator has left. This adds the
 * chained sources to their vertex's operators; the field is private and final, so it is replaced by
 * reflection, here only, on the cluster side before the job is scheduled. Flink orders the list
 * from the chain's end, whose state holds the output channels', to its head, whose state holds the
 * input channels': the sources go in between, so both keep their places (in a chain of one
 * operator, the head stays first and the sources follow; Clonos's checkpoints are aligned, with no
 * channel state).
 */
@Internal
public final class ClonosChainedSourcesPatch {

    private static final ReflectedField OPERATOR_IDS =
            ReflectedField.of(JobVertex.class, "operatorIDs");

    private ClonosChainedSourcesPatch() {}

    /** Set on a vertex that chains sources, so that the JobManager triggers its checkpoints. */
    private static final ConfigOption<Boolean> CHAINS_SOURCES =
            ConfigOptions.key("clonos.internal.chains-sources")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription("Internal: the vertex chains sources. Not set by users.");

    /** Whether {@code vertex} chains sources to an operator of several inputs. */
    public static boolean chainsSources(JobVertex vertex) {
        return vertex.getConfiguration().get(CHAINS_SOURCES);
    }

    /** Adds the chained sources {@code sources} to {@code vertex}'s operators, once each. */
    public static void addChainedSources(JobVertex vertex, Collection<OperatorID> sources) {
        if (sources.isEmpty()) {
            return;
        }
        vertex.getConfiguration().set(CHAINS_SOURCES, true);
        List<OperatorIDPair> operators = new ArrayList<>();
        for (OperatorID source : sources) {
            boolean known =
                    vertex.getOperatorIDs().stream()
                            .anyMatch(pair -> pair.getGeneratedOperatorID().equals(source));
            if (!known) {
                operators.add(OperatorIDPair.generatedIDOnly(source));
            }
        }
        if (operators.isEmpty()) {
            return;
        }
        List<OperatorIDPair> chain = new ArrayList<>(vertex.getOperatorIDs());
        chain.addAll(Math.max(1, chain.size() - 1), operators);
        OPERATOR_IDS.set(vertex, Collections.unmodifiableList(chain));
    }
}
