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

package org.apache.flink.runtime.io.network.netty;

import io.clonos.runtime.reflect.ReflectedField;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.partition.BufferAvailabilityListener;
import org.apache.flink.shaded.netty4.io.netty.channel.Channel;
import org.apache.flink.shaded.netty4.io.netty.channel.ChannelHandlerContext;

import javax.annotation.Nullable;

/**
 * PATCH of Flink's behaviour, kept to this one class in Flink's package.
 *
 * <p>Why: a producer learns that a remote consumer's connection broke only inside Flink's server
 * handler, which releases the consumer's reader and tells nobody. Clonos reports the consumer's
 * TaskManager to the JobManager instead ({@code ConsumerConnections}), and needs the connection to
 * do so: the reader Flink hands the partition manager for a remote consumer (package-private) keeps
 * its request queue in a private field, and the queue its Netty channel context in another.
 */
@Internal
public final class ClonosConsumerConnectionPatch {

    private static final ReflectedField REQUEST_QUEUE =
            ReflectedField.of(CreditBasedSequenceNumberingViewReader.class, "requestQueue");
    private static final ReflectedField CONTEXT =
            ReflectedField.of(PartitionRequestQueue.class, "ctx");

    private ClonosConsumerConnectionPatch() {}

    /**
     * The Netty connection through which a remote consumer reads a subpartition; null for a local
     * consumer (an input channel of the same TaskManager).
     */
    @Nullable
    public static Channel connectionOf(BufferAvailabilityListener reader) {
        if (!(reader instanceof CreditBasedSequenceNumberingViewReader)) {
            return null;
        }
        Object context = CONTEXT.get(REQUEST_QUEUE.get(reader));
        return context == null ? null : ((ChannelHandlerContext) context).channel();
    }
}
