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

package org.apache.flink.runtime.io.network.partition.consumer;

import io.clonos.runtime.reflect.ReflectedField;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.event.TaskEvent;

import javax.annotation.Nullable;

import java.io.IOException;

/**
 * PATCH of Flink's behaviour, kept to this one class in Flink's package (Clonos's jar sits on the
 * same class path as Flink's, so package-private members are reachable without reflection).
 *
 * <p>Why: when a producer dies, Flink stores the error in the consumer's input channel (remote) or
 * releases the channel's subpartition view (local), and a later poll of the gate throws without
 * saying which channel failed. Clonos's input gate asks each channel here whether its producer is
 * gone, so that it can replace exactly those channels and let the task run on. It also sends a task
 * event upstream on one channel only (Flink's gate sends to all of its channels), for the
 * consumer's answer to a restarted producer. And it requests the channels that Flink's request of a
 * gate leaves out when one producer cannot be reached ({@link #requestChannelsLeftOut}). And it
 * reads which checkpoint's barrier last arrived in a remote channel ({@link #arrivedBarrier}),
 * which Flink keeps in a private field, so that a task whose full in-flight log holds it back still
 * lets a barrier through.
 */
@Internal
public final class ClonosChannelProbe {

    /** {@code RemoteInputChannel.lastBarrierId}: set when a barrier arrives, before it is read. */
    private static final ReflectedField LAST_BARRIER_ID =
            ReflectedField.of(RemoteInputChannel.class, "lastBarrierId");

    private ClonosChannelProbe() {}

    /**
     * The highest checkpoint whose barrier arrived in the channel, read by the task or not, as far
     * as Flink keeps it (an aborted checkpoint's is forgotten); {@code Long.MIN_VALUE} for a
     * channel that is not remote or has none.
     */
    public static long arrivedBarrier(InputChannel channel) {
        if (!(channel instanceof RemoteInputChannel)) {
            return Long.MIN_VALUE;
        }
        long id = (Long) LAST_BARRIER_ID.get(channel);
        return id < 0 ? Long.MIN_VALUE : id;
    }

    /** Why the channel's producer can no longer be read, or null while it can. */
    @Nullable
    public static Throwable producerFailure(InputChannel channel) {
        try {
            channel.checkError();
        } catch (Throwable t) {
            return t;
        }
        if (channel instanceof LocalInputChannel) {
            LocalInputChannel local = (LocalInputChannel) channel;
            if (local.getSubpartitionView() != null && local.getSubpartitionView().isReleased()) {
                Throwable cause = local.getSubpartitionView().getFailureCause();
                return cause != null
                        ? cause
                        : new IllegalStateException(
                                "The local producer's subpartition was released");
            }
        }
        return null;
    }

    /**
     * Requests the subpartitions of the channels that Flink's request of the gate left out. {@link
     * SingleInputGate#requestPartitions} stops at the first channel whose producer cannot be
     * reached (a TaskManager lost while this task was deployed): Flink fails the task then anyway.
     * Clonos lets the task run on and replaces that one channel when the producer's new attempt
     * runs, so the channels after it in Flink's order must still be requested, or the task never
     * connects to their producers, which wait for it until their recovery times out. Channels
     * before it were requested already (requesting a local channel twice would start a second retry
     * of a missing partition); channels whose producer is not known yet are requested when it is.
     */
    public static void requestChannelsLeftOut(SingleInputGate gate) {
        boolean leftOut = false;
        for (InputChannel channel : gate.inputChannels()) {
            if (!leftOut) {
                leftOut = producerFailure(channel) != null;
                continue;
            }
            if (channel instanceof RemoteInputChannel || channel instanceof LocalInputChannel) {
                try {
                    channel.requestSubpartitions();
                } catch (Throwable t) {
                    channel.setError(t);
                }
            }
        }
    }

    /** Sends a task event to the producer of one channel. */
    public static void sendTaskEvent(InputChannel channel, TaskEvent event) throws IOException {
        channel.sendTaskEvent(event);
    }
}
