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

package io.clonos.runtime.network;

import org.apache.flink.runtime.io.network.api.CancelCheckpointMarker;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;

import static io.clonos.runtime.network.GateItems.barrier;
import static org.assertj.core.api.Assertions.assertThat;

class GateInjectionsTest {

    private static final int GATE = 3;

    @Test
    void anAlignmentOfAnAbortedCheckpointIsCancelledOnceOnAChannelItBlocks() {
        ChannelProgress progress = new ChannelProgress("task", 3);
        GateInjections injections = new GateInjections("task", GATE);
        progress.delivered(barrier(1, 5));
        progress.delivered(barrier(2, 5));
        assertThat(injections.hasAbortedAlignment(progress)).as("nothing aborted").isFalse();

        injections.checkpointAborted(5);
        assertThat(injections.hasAbortedAlignment(progress)).isTrue();
        injections.cancelAbortedAlignment(progress, () -> true);

        BufferOrEvent cancel = injections.poll();
        assertThat(cancel.getEvent()).isEqualTo(new CancelCheckpointMarker(5));
        assertThat(cancel.getChannelInfo().getGateIdx()).isEqualTo(GATE);
        assertThat(cancel.getChannelInfo().getInputChannelIdx()).isEqualTo(1);
        assertThat(injections.hasAbortedAlignment(progress))
                .as("one cancellation ends the whole alignment")
                .isFalse();
        injections.cancelAbortedAlignment(progress, () -> true);
        assertThat(injections.isEmpty()).isTrue();
    }

    @Test
    void anAbortThatCameBeforeTheFirstBarrierCancelsTheAlignmentOnceItOpens() {
        ChannelProgress progress = new ChannelProgress("task", 2);
        GateInjections injections = new GateInjections("task", GATE);
        injections.checkpointAborted(7);
        injections.cancelAbortedAlignment(progress, () -> true);
        assertThat(injections.isEmpty()).as("no alignment open yet").isTrue();

        progress.delivered(barrier(0, 7));
        injections.cancelAbortedAlignment(progress, () -> true);
        assertThat(injections.poll().getEvent()).isEqualTo(new CancelCheckpointMarker(7));
    }

    @Test
    void aTaskThatDoesNotChooseFreelyCancelsNothingUntilItDoes() {
        ChannelProgress progress = new ChannelProgress("task", 2);
        GateInjections injections = new GateInjections("task", GATE);
        progress.delivered(barrier(0, 6));
        injections.checkpointAborted(6);
        injections.cancelAbortedAlignment(progress, () -> false);
        assertThat(injections.isEmpty()).as("still regenerating its predecessor's output").isTrue();
        assertThat(injections.hasAbortedAlignment(progress)).isTrue();

        injections.cancelAbortedAlignment(progress, () -> true);
        assertThat(injections.poll().getEvent()).isEqualTo(new CancelCheckpointMarker(6));
    }

    @Test
    void anAlignmentOfALaterCheckpointIsKept() {
        ChannelProgress progress = new ChannelProgress("task", 2);
        GateInjections injections = new GateInjections("task", GATE);
        injections.checkpointAborted(4);
        progress.delivered(barrier(0, 5));
        assertThat(injections.hasAbortedAlignment(progress)).isFalse();
        injections.cancelAbortedAlignment(progress, () -> true);
        assertThat(injections.isEmpty()).isTrue();
    }

    @Test
    void aTaskWaitingForInputIsWokenByANewAbortOnly() {
        GateInjections injections = new GateInjections("task", GATE);
        CompletableFuture<?> first = injections.abortArrived();
        injections.checkpointAborted(3);
        assertThat(first).isDone();

        CompletableFuture<?> second = injections.abortArrived();
        assertThat(second).isNotDone();
        injections.checkpointAborted(2);
        injections.checkpointAborted(3);
        assertThat(second).as("an older abort, or the same again").isNotDone();
        injections.checkpointAborted(4);
        assertThat(second).isDone();
    }

    @Test
    void aLostProducersChannelWithoutAnAlignmentCancelsNothing() {
        GateInjections injections = new GateInjections("task", GATE);
        injections.cancelAlignment(0, -1);
        assertThat(injections.isEmpty()).isTrue();
        injections.cancelAlignment(0, 9);
        assertThat(injections.poll().getEvent()).isEqualTo(new CancelCheckpointMarker(9));
    }
}
