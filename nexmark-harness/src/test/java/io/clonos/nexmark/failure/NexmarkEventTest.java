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

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The failure experiment's events: Beam's generator, paced at the rate, and their lines. */
class NexmarkEventTest {

    @Test
    void generatedEventsAreDueAtTheRateAndRoundTrip() {
        Generator generator =
                new Generator(
                        new GeneratorConfig(
                                EventPublisher.configuration(1_000, 500),
                                EventPublisher.BASE_TIME,
                                1,
                                1_000,
                                0));
        List<Long> due = new ArrayList<>();
        int persons = 0;
        int auctions = 0;
        while (generator.hasNext()) {
            Generator.NextEvent next = generator.nextEvent();
            due.add(next.eventTimestamp);
            String line = GeneratorEvents.line(next.event);
            NexmarkEvent parsed = NexmarkEvent.parse(line);
            if (next.event.newPerson != null) {
                persons++;
                assertThat(parsed.kind).isEqualTo(NexmarkEvent.PERSON);
                assertThat(parsed.id).isEqualTo(next.event.newPerson.id);
                assertThat(parsed.state).isEqualTo(next.event.newPerson.state);
                assertThat(parsed.dateTime).isEqualTo(next.eventTimestamp);
                assertThat(parsed.extra).isEqualTo(next.event.newPerson.extra);
            } else if (next.event.newAuction != null) {
                auctions++;
                assertThat(parsed.kind).isEqualTo(NexmarkEvent.AUCTION);
                assertThat(parsed.seller).isEqualTo(next.event.newAuction.seller);
                assertThat(parsed.reserve).isEqualTo(next.event.newAuction.reserve);
            } else {
                assertThat(parsed).as("bids are dropped").isNull();
            }
        }
        assertThat(due).as("in event-time order: no delayed events").hasSize(1_000).isSorted();
        assertThat(due.get(0)).isEqualTo(EventPublisher.BASE_TIME);
        // 1,000 events at 500/s span two seconds
        assertThat(due.get(999) - due.get(0)).isBetween(1_990L, 2_000L);
        assertThat(persons).isPositive();
        assertThat(auctions).isGreaterThan(persons);
    }

    @Test
    void aLineThatIsNoEventIsRejected() {
        assertThatThrownBy(() -> NexmarkEvent.parse("hello"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("hello");
        assertThatThrownBy(() -> NexmarkEvent.parse("P|1|x"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> NexmarkEvent.parse("A|1|2|x|4|5|extra"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> NexmarkEvent.parse("A|1|2|3|4|5"))
                .as("the padding is missing")
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void eachPartitionEndsWhereItsShareOfTheEventsEnds() {
        assertThat(EventPublisher.endOffsets(7, 3))
                .containsEntry(0, 3L)
                .containsEntry(1, 2L)
                .containsEntry(2, 2L);
    }

    /** The queries keep persons and auctions in state: their sizes size the state. */
    @Test
    void personsAndAuctionsComeOfTheConfiguredSizes() {
        assertThat(meanLineBytes(EventPublisher.EventSizes.NEXMARK, NexmarkEvent.PERSON))
                .isBetween(100.0, 300.0);
        EventPublisher.EventSizes large = new EventPublisher.EventSizes(4_000, 6_000);
        assertThat(meanLineBytes(large, NexmarkEvent.PERSON)).isBetween(3_000.0, 5_000.0);
        assertThat(meanLineBytes(large, NexmarkEvent.AUCTION)).isBetween(4_500.0, 7_500.0);
    }

    private static double meanLineBytes(EventPublisher.EventSizes sizes, char kind) {
        Generator generator =
                new Generator(
                        new GeneratorConfig(
                                EventPublisher.configuration(2_000, 1_000, sizes),
                                EventPublisher.BASE_TIME,
                                1,
                                2_000,
                                0));
        long bytes = 0;
        int count = 0;
        while (generator.hasNext()) {
            String line = GeneratorEvents.line(generator.nextEvent().event);
            NexmarkEvent parsed = NexmarkEvent.parse(line);
            if (parsed != null && parsed.kind == kind) {
                bytes += line.length();
                count++;
            }
        }
        assertThat(count).isPositive();
        return (double) bytes / count;
    }
}
