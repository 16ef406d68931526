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

package io.clonos.connector.kafka;

import org.apache.flink.annotation.PublicEvolving;

/**
 * What {@link ClonosKafkaSink} does when a restarted job regenerates, at a position its predecessor
 * already published, a record with other contents: the predecessor's choices that made the record
 * did not all reach Kafka (or the job is not the one that wrote the output), so the published
 * record and the new one are two results of one input. A local recovery never gets here: it replays
 * by the determinants in Kafka, and a different record there fails it into a global rollback, after
 * which this policy applies.
 */
@PublicEvolving
public enum DivergencePolicy {
    /** Fail the job without restarting it (Flink's {@code SuppressRestartsException}). */
    FAIL,
    /**
     * Publish the new record too, and every record the writer publishes after it, marked with the
     * header {@value OutputHeaders#DIVERGENT} and counted in the writer's {@code
     * clonosDivergentRecords} metric: the regenerated output may repeat, at other positions, what
     * the predecessor published, and consumers can tell which records may. Records at positions the
     * predecessor's output had a gap at (records lost with it) are marked too when the writer does
     * not replay its predecessor's determinants.
     */
    PUBLISH_MARKED
}
