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

import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.io.PullingAsyncDataInput.EndOfDataStatus;
import org.apache.flink.runtime.io.network.api.CancelCheckpointMarker;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.api.EndOfData;
import org.apache.flink.runtime.io.network.api.EndOfPartitionEvent;
import org.apache.flink.runtime.io.network.api.StopMode;

import org.junit.jupiter.api.Test;

import static io.clonos.runtime.network.GateItems.barrier;
import static io.clonos.runtime.network.GateItems.data;
import static io.clonos.runtime.network.GateItems.event;
import static org.assertj.core.api.Assertions.assertThat;

/** What a gate remembers per channel of what the task was handed. */
class ChannelProgressTest {

    @Test
    void aBarrierBlocksItsChannelUntilResumedOrAborted() {
        ChannelProgress progress = new ChannelProgress("task", 2);
        progress.delivered(data(0, 4));
        assertThat(progress.isAligning(0)).isFalse();

        progress.delivered(barrier(0, 7));
        assertThat(progress.isAligning(0)).isTrue();
        assertThat(progress.isAligning(1)).isFalse();
        assertThat(progress.alignmentResumed(0)).as("the connection is resumed").isTrue();
        assertThat(progress.isAligning(0)).isFalse();
        assertThat(progress.producerLost(0, false)).as("nothing to cancel").isEqualTo(-1);

        progress.delivered(barrier(1, 8));
        assertThat(progress.producerLost(1, false)).isEqualTo(8);
        assertThat(progress.isAligning(1)).isFalse();
    }

    @Test
    void aProducerLostDuringAReplayLeavesTheAlignmentToTheReplay() {
        ChannelProgress progress = new ChannelProgress("task", 2);
        progress.delivered(barrier(0, 13));
        assertThat(progress.producerLost(0, true)).as("no cancellation now").isEqualTo(-1);
        assertThat(progress.isAligning(0)).isTrue();

        progress.delivered(barrier(1, 13));
        assertThat(progress.alignmentResumed(1)).isTrue();
        assertThat(progress.alignmentResumed(0))
                .as("the new connection of channel 0 is not blocked")
                .isFalse();
        assertThat(progress.replayEnded()).as("the alignment completed in the replay").isEmpty();
    }

    @Test
    void anAlignmentKeptAcrossALostProducerIsCancelledWhenTheReplayEndsWithItOpen() {
        ChannelProgress progress = new ChannelProgress("task", 3);
        progress.delivered(barrier(2, 5));
        progress.producerLost(2, true);
        assertThat(progress.replayEnded()).containsExactly(java.util.Map.entry(2, 5L));
        assertThat(progress.isAligning(2)).isFalse();
        assertThat(progress.replayEnded()).isEmpty();
    }

    @Test
    void aBarrierTheGateReceivedIsRepeatedByARegeneratedStreamWhetherOrNotTheTaskReadIt() {
        ChannelProgress progress = new ChannelProgress("task", 2);
        assertThat(progress.dropsRepeat(0, checkpointBarrier(6), true)).isFalse();
        progress.delivered(barrier(0, 6));
        progress.alignmentResumed(0);
        // a recovering task has not read it yet: it waits in the replay's queue
        assertThat(progress.dropsRepeat(0, checkpointBarrier(7), false)).isFalse();
        assertThat(progress.dropsRepeat(0, checkpointBarrier(6), true)).isTrue();
        assertThat(progress.dropsRepeat(0, checkpointBarrier(7), true)).isTrue();
        assertThat(progress.dropsRepeat(1, checkpointBarrier(7), true))
                .as("another channel")
                .isFalse();
        assertThat(progress.dropsRepeat(0, checkpointBarrier(8), true))
                .as("the next checkpoint")
                .isFalse();
    }

    @Test
    void aCancellationTheGateReceivedIsRepeatedByARegeneratedStreamAsABarrierIs() {
        ChannelProgress progress = new ChannelProgress("task", 2);
        assertThat(progress.dropsRepeat(0, new CancelCheckpointMarker(5), false)).isFalse();
        assertThat(progress.dropsRepeat(0, new CancelCheckpointMarker(5), false))
                .as("not from a replacement: the task reads it as Flink's gate would")
                .isFalse();
        assertThat(progress.dropsRepeat(0, new CancelCheckpointMarker(5), true))
                .as("a replacement's repeat")
                .isTrue();
        assertThat(progress.dropsRepeat(0, checkpointBarrier(5), true))
                .as("the barrier of the cancelled checkpoint")
                .isTrue();
        assertThat(progress.dropsRepeat(0, new CancelCheckpointMarker(6), true))
                .as("the next checkpoint's")
                .isFalse();
        assertThat(progress.dropsRepeat(1, new CancelCheckpointMarker(5), true))
                .as("another channel")
                .isFalse();
        assertThat(progress.dropsRepeat(0, new EndOfData(StopMode.DRAIN), true))
                .as("no checkpoint's event")
                .isFalse();
    }

    @Test
    void theEndOfDataOfEveryChannelEndsTheGatesData() {
        ChannelProgress progress = new ChannelProgress("task", 2);
        progress.delivered(event(0, new EndOfData(StopMode.DRAIN)));
        assertThat(progress.dataEnded(0)).isTrue();
        assertThat(progress.dataEnded(1)).isFalse();
        assertThat(progress.endOfDataStatus()).isEqualTo(EndOfDataStatus.NOT_END_OF_DATA);

        progress.delivered(event(1, new EndOfData(StopMode.DRAIN)));
        assertThat(progress.endOfDataStatus()).isEqualTo(EndOfDataStatus.DRAINED);
    }

    @Test
    void oneChannelStoppedWithoutDrainingStopsTheGate() {
        ChannelProgress progress = new ChannelProgress("task", 2);
        progress.delivered(event(0, new EndOfData(StopMode.DRAIN)));
        progress.delivered(event(1, new EndOfData(StopMode.NO_DRAIN)));
        assertThat(progress.endOfDataStatus()).isEqualTo(EndOfDataStatus.STOPPED);
    }

    @Test
    void aFreshStreamReopensAChannelWhoseDataEndedWhileTheGatesDataGoesOn() {
        ChannelProgress progress = new ChannelProgress("task", 2);
        assertThat(progress.streamStartsAfresh(0)).as("a channel that did not end").isTrue();
        progress.delivered(event(0, new EndOfData(StopMode.DRAIN)));

        assertThat(progress.streamStartsAfresh(0)).isTrue();
        assertThat(progress.dataEnded(0))
                .as("the new stream's end of data is the one to wait for")
                .isFalse();
        progress.delivered(event(1, new EndOfData(StopMode.DRAIN)));
        assertThat(progress.endOfDataStatus()).isEqualTo(EndOfDataStatus.NOT_END_OF_DATA);
        progress.delivered(event(0, new EndOfData(StopMode.DRAIN)));
        assertThat(progress.endOfDataStatus()).isEqualTo(EndOfDataStatus.DRAINED);
    }

    @Test
    void aFreshStreamCannotBeTakenOnceTheGatesDataEnded() {
        ChannelProgress progress = new ChannelProgress("task", 2);
        progress.delivered(event(0, new EndOfData(StopMode.DRAIN)));
        progress.delivered(event(1, new EndOfData(StopMode.DRAIN)));

        assertThat(progress.streamStartsAfresh(1)).isFalse();
        assertThat(progress.endOfDataStatus()).isEqualTo(EndOfDataStatus.DRAINED);
    }

    @Test
    void theGateIsFinishedWhenEveryPartitionEnded() {
        ChannelProgress progress = new ChannelProgress("task", 3);
        progress.delivered(event(1, EndOfPartitionEvent.INSTANCE));
        assertThat(progress.partitionEnded(1)).isTrue();
        assertThat(progress.isFinished()).isFalse();
        assertThat(progress.unfinishedChannels(4))
                .containsExactly(new InputChannelInfo(4, 0), new InputChannelInfo(4, 2));

        progress.delivered(event(0, EndOfPartitionEvent.INSTANCE));
        progress.delivered(event(2, EndOfPartitionEvent.INSTANCE));
        assertThat(progress.isFinished()).isTrue();
        assertThat(progress.unfinishedChannels(4)).isEmpty();
    }

    @Test
    void onlyTheFirstEndOfRecoveredStateOfAChannelCounts() {
        ChannelProgress progress = new ChannelProgress("task", 2);
        assertThat(progress.recoveredStateEnded(0)).isTrue();
        assertThat(progress.recoveredStateEnded(0)).as("a restarted producer's repeat").isFalse();
        assertThat(progress.recoveredStateEnded(1)).isTrue();
    }

    private static CheckpointBarrier checkpointBarrier(long checkpointId) {
        return new CheckpointBarrier(
                checkpointId, 0, CheckpointOptions.forCheckpointWithDefaultLocation());
    }
}
