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

package io.clonos.nexmark.failure;

import org.apache.beam.sdk.nexmark.sources.generator.Generator;
import org.apache.beam.sdk.nexmark.sources.generator.GeneratorConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The synthetic job's keys come from every kind of event, and its state size from the option. */
class SyntheticStagesTest {

    @Test
    void everyEventIsKeyedByItsOwnIdOrItsAuctions() {
        Generator generator =
                new Generator(
                        new GeneratorConfig(
                                EventPublisher.configuration(500, 500),
                                EventPublisher.BASE_TIME,
                                1,
                                500,
                                0));
        int bids = 0;
        while (generator.hasNext()) {
            Generator.NextEvent next = generator.nextEvent();
            long id = SyntheticStages.idOf(GeneratorEvents.line(next.event));
            if (next.event.newPerson != null) {
                assertThat(id).isEqualTo(next.event.newPerson.id);
            } else if (next.event.newAuction != null) {
                assertThat(id).isEqualTo(next.event.newAuction.id);
            } else {
                bids++;
                assertThat(id).isEqualTo(next.event.bid.auction);
            }
        }
        assertThat(bids).as("bids are keyed too, not dropped").isPositive();
    }

    @Test
    void aLineThatIsNoEventIsRejected() {
        assertThatThrownBy(() -> SyntheticStages.idOf("hello"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("hello");
        assertThatThrownBy(() -> SyntheticStages.idOf("X|1|2"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SyntheticStages.idOf("B|x|2|3|4"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SyntheticStages.idOf("P|"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theStatePerSubtaskIsSpreadOverItsKeys() {
        assertThat((long) SyntheticStages.stateBytesPerKey(200) * SyntheticStages.KEYS_PER_SUBTASK)
                .isEqualTo(200L * 1024 * 1024);
    }
}
