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

package io.clonos.streaming.sink;

import io.clonos.runtime.configuration.ClonosConfiguration;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.connector.sink2.Sink;

import java.util.Optional;

/**
 * Offers a {@link DeterminantHoldingSink} in the place of a sink of Flink's, so that an unchanged
 * job's exactly-once output needs no two-phase commit. A connector registers its substitution as a
 * {@link java.util.ServiceLoader} service; the rewriting at submission looks for substitutions in
 * the job's class loader, so a substitution is found where the connector it substitutes loads (the
 * job's jar, {@code pipeline.classpaths} or the cluster's {@code lib/}).
 *
 * <p>The substitute takes over the writer's place in the job graph: same operator, same state name,
 * so it must restore only checkpoints of its own kind and fail clearly on others.
 */
@PublicEvolving
public interface SinkSubstitution {

    /**
     * What becomes of {@code sink} in a job with the settings {@code job}: empty when this
     * substitution does not know sinks of its kind, otherwise the substitute or why the sink is
     * kept.
     */
    Optional<SinkSubstitute> substituteFor(Sink<?> sink, ClonosConfiguration job);
}
