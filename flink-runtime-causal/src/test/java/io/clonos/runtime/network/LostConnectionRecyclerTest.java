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

import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.execution.CancelTaskException;
import org.apache.flink.runtime.io.network.buffer.BufferRecycler;
import org.apache.flink.runtime.io.network.buffer.NetworkBuffer;
import org.apache.flink.runtime.io.network.netty.exception.RemoteTransportException;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LostConnectionRecyclerTest {

    private final List<MemorySegment> returned = new ArrayList<>();

    /** Returns the segment, then fails the way a broken channel's credit announcement does. */
    private BufferRecycler failingAfterReturn(RuntimeException failure) {
        return segment -> {
            returned.add(segment);
            throw failure;
        };
    }

    @Test
    void theBrokenConnectionsErrorOfTheCreditAnnouncementIsDropped() {
        MemorySegment segment = MemorySegmentFactory.allocateUnpooledSegment(32);
        RuntimeException announcement =
                new RuntimeException(
                        new RemoteTransportException("Connection unexpectedly closed", null));
        BufferRecycler recycler =
                new LostConnectionRecycler(failingAfterReturn(announcement), "task");

        recycler.recycle(segment);

        assertThat(returned).containsExactly(segment);
    }

    @Test
    void aCancellationAndOtherFailuresPropagate() {
        MemorySegment segment = MemorySegmentFactory.allocateUnpooledSegment(32);
        CancelTaskException cancelled = new CancelTaskException("cancelled");
        IllegalStateException bug = new IllegalStateException("bug");

        assertThatThrownBy(
                        () ->
                                new LostConnectionRecycler(failingAfterReturn(cancelled), "task")
                                        .recycle(segment))
                .isSameAs(cancelled);
        assertThatThrownBy(
                        () ->
                                new LostConnectionRecycler(failingAfterReturn(bug), "task")
                                        .recycle(segment))
                .isSameAs(bug);
    }

    @Test
    void onlyARemoteChannelsExclusiveBufferIsGuarded() {
        BufferRecycler pool = segment -> returned.add(segment);
        NetworkBuffer buffer =
                new NetworkBuffer(MemorySegmentFactory.allocateUnpooledSegment(32), pool);
        BufferOrEvent item = new BufferOrEvent(buffer, new InputChannelInfo(0, 0));

        LostConnectionRecycler.guard(item, "task");

        assertThat(buffer.getRecycler()).as("a pool's buffer keeps its recycler").isSameAs(pool);
        buffer.recycleBuffer();
        assertThat(returned).hasSize(1);
    }
}
