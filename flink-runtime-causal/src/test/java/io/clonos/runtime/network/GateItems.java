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

import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.event.AbstractEvent;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.buffer.FreeingBufferRecycler;
import org.apache.flink.runtime.io.network.buffer.NetworkBuffer;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;

/** What arrives on a channel of a gate, for the tests of the gate's parts. */
final class GateItems {

    static final int GATE = 0;

    private GateItems() {}

    /** {@code bytes} bytes of data on {@code channel}, each byte its position in the data. */
    static BufferOrEvent data(int channel, int bytes) {
        byte[] content = new byte[bytes];
        for (int i = 0; i < bytes; i++) {
            content[i] = (byte) i;
        }
        Buffer buffer =
                new NetworkBuffer(
                        MemorySegmentFactory.wrap(content),
                        FreeingBufferRecycler.INSTANCE,
                        Buffer.DataType.DATA_BUFFER,
                        bytes);
        return new BufferOrEvent(buffer, new InputChannelInfo(GATE, channel));
    }

    static BufferOrEvent event(int channel, AbstractEvent event) {
        return new BufferOrEvent(event, new InputChannelInfo(GATE, channel));
    }

    static BufferOrEvent barrier(int channel, long checkpoint) {
        return event(
                channel,
                new CheckpointBarrier(
                        checkpoint, 0, CheckpointOptions.forCheckpointWithDefaultLocation()));
    }
}
