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

import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which finished producers restart with a batch: a side input's chain (source, then a map) that
 * finished before the checkpoint, a producer that finished after it, and a running one, all feeding
 * one consumer.
 */
class FinishedProducersTest {

    private static final JobVertexID SIDE_SOURCE = new JobVertexID();
    private static final JobVertexID SIDE_MAP = new JobVertexID();
    private static final JobVertexID LATE = new JobVertexID();
    private static final JobVertexID MAIN = new JobVertexID();
    private static final JobVertexID CONSUMER = new JobVertexID();

    private static final ExecutionVertexID source = new ExecutionVertexID(SIDE_SOURCE, 0);
    private static final ExecutionVertexID map = new ExecutionVertexID(SIDE_MAP, 0);
    private static final ExecutionVertexID late = new ExecutionVertexID(LATE, 0);
    private static final ExecutionVertexID main = new ExecutionVertexID(MAIN, 0);
    private static final ExecutionVertexID consumer = new ExecutionVertexID(CONSUMER, 0);

    private static final Map<ExecutionVertexID, List<ExecutionVertexID>> PRODUCERS =
            Map.of(
                    consumer, List.of(map, late, main),
                    map, List.of(source),
                    source, List.of(),
                    late, List.of(),
                    main, List.of());

    private final FinishedProducers finished =
            new FinishedProducers(
                    Set.of(source, map, late)::contains,
                    Set.of(SIDE_SOURCE, SIDE_MAP)::contains,
                    PRODUCERS::get);

    @Test
    void producersFinishedInTheCheckpointRestartWithTheirConsumerAndTheirOwnProducers() {
        assertThat(finished.toRestartWith(Set.of(consumer))).containsExactlyInAnyOrder(map, source);
    }

    @Test
    void aProducerThatFinishedAfterTheCheckpointOrRunsDoesNotRestartFinished() {
        assertThat(finished.restartsFinished(late)).isFalse();
        assertThat(finished.restartsFinished(main)).isFalse();
        assertThat(finished.restartsFinished(map)).isTrue();
    }

    @Test
    void aBatchWithoutFinishedProducersOrContainingThemAddsNothingOfItsOwn() {
        assertThat(finished.toRestartWith(Set.of(main))).isEmpty();
        assertThat(finished.toRestartWith(Set.of(consumer, map))).containsExactly(source);
    }
}
