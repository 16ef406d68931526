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

import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.runtime.execution.CancelTaskException;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.buffer.BufferRecycler;
import org.apache.flink.runtime.io.network.buffer.NetworkBuffer;
import org.apache.flink.runtime.io.network.partition.consumer.BufferManager;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * Recycles an exclusive buffer of a remote channel without failing the task when the channel's
 * connection broke while the task still held the buffer.
 *
 * <p>Why: Flink's {@link BufferManager} returns the buffer's memory to the channel's queue and then
 * announces it to the producer as credit; the announcement rethrows the channel's error. In Flink
 * any such error fails the task anyway. A Clonos consumer survives the loss of a producer (its gate
 * retires the channel and reads the replacement's stream), but a buffer that came through the lost
 * connection before it broke may still be half-read by the task's deserializer; finishing it
 * recycled it, the recycle threw the connection's error on the task thread, and a task of a
 * surviving slice was restarted with the lost ones.
 *
 * <p>Dropping the error loses nothing: the memory is back in the channel's queue before the
 * announcement is attempted, and the channel keeps its error, which every later read of the channel
 * raises to the gate. Only the credit announcement's {@link IOException} is dropped; a cancellation
 * of the task and any other failure propagate.
 */
@Internal
final class LostConnectionRecycler implements BufferRecycler {

    private static final Logger LOG = LoggerFactory.getLogger(LostConnectionRecycler.class);

    private final BufferRecycler channelRecycler;
    private final String taskName;

    LostConnectionRecycler(BufferRecycler channelRecycler, String taskName) {
        this.channelRecycler = channelRecycler;
        this.taskName = taskName;
    }

    /** Guards the buffer of the item if it is an exclusive buffer of a remote channel. */
    static void guard(BufferOrEvent item, String taskName) {
        if (!item.isBuffer()) {
            return;
        }
        Buffer buffer = item.getBuffer();
        // a composite or file-region buffer has no recycler of its own to replace
        if (buffer instanceof NetworkBuffer && buffer.getRecycler() instanceof BufferManager) {
            buffer.setRecycler(new LostConnectionRecycler(buffer.getRecycler(), taskName));
        }
    }

    @Override
    public void recycle(MemorySegment segment) {
        try {
            channelRecycler.recycle(segment);
        } catch (CancelTaskException e) {
            throw e;
        } catch (RuntimeException e) {
            if (!(e.getCause() instanceof IOException)) {
                throw e;
            }
            LOG.debug(
                    "{} recycled a buffer of a connection that broke meanwhile; the channel keeps"
                            + " its error for the gate.",
                    taskName,
                    e);
        }
    }
}
