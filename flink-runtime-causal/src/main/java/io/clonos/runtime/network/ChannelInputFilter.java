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
import org.apache.flink.runtime.event.AbstractEvent;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.api.EndOfData;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;
import org.apache.flink.runtime.io.network.partition.consumer.EndOfChannelStateEvent;

import javax.annotation.Nullable;

import java.io.IOException;

/**
 * What of each channel's input reaches the task. Every item a channel's current connection delivers
 * passes the connection's {@link RestoredCheckpointFilter} (a task restored from checkpoint {@code
 * c} skips what its producers replay from before barrier {@code c}), the causal consumer's
 * accounting, and the checks for what a replacement producer repeats (barriers, end of data, end of
 * recovered state); the connection-level events ({@link ReplayStartEvent}) never reach the task. On
 * the task thread.
 */
@Internal
final class ChannelInputFilter {

    /** The producers upstream, as far as a dropped item concerns them. */
    interface Upstream {

        /** Resumes the channel's producer, which a dropped barrier or announcement blocked. */
        void resume(int channel) throws IOException;

        /** Acknowledges that the task processed all the channel's records. */
        void acknowledgeAllRecordsProcessed(int channel) throws IOException;
    }

    private final String taskName;
    private final ChannelProgress progress;
    private final GateInjections injected;
    private final Upstream upstream;

    /** Per channel: what its current connection lets through. */
    private final RestoredCheckpointFilter[] filters;

    private volatile long restoredCheckpointId = ClonosInputGate.NOT_RESTORED;

    /** Null without causal logging. */
    @Nullable private CausalConsumer consumer;

    ChannelInputFilter(
            String taskName,
            int numberOfChannels,
            ChannelProgress progress,
            GateInjections injected,
            Upstream upstream) {
        this.taskName = taskName;
        this.progress = progress;
        this.injected = injected;
        this.upstream = upstream;
        this.filters = new RestoredCheckpointFilter[numberOfChannels];
        for (int i = 0; i < numberOfChannels; i++) {
            filters[i] = new RestoredCheckpointFilter(taskName, i, false);
        }
    }

    /** The checkpoint the owning task was restored from; set before the task reads its input. */
    void setRestoredCheckpointId(long checkpointId) {
        this.restoredCheckpointId = checkpointId;
    }

    long restoredCheckpointId() {
        return restoredCheckpointId;
    }

    /** From now on the causal consumer sees, and may drop, what passes the connection's filter. */
    void enableCausalLogging(CausalConsumer consumer) {
        this.consumer = consumer;
    }

    /** The channel's producer was replaced: its new connection starts with a filter of its own. */
    void reconnected(int channel) {
        filters[channel] = new RestoredCheckpointFilter(taskName, channel, true);
    }

    /** Whether the task sees {@code boe}; a dropped buffer is recycled. */
    boolean accept(BufferOrEvent boe) throws IOException {
        int channel = boe.getChannelInfo().getInputChannelIdx();
        RestoredCheckpointFilter filter = filters[channel];
        if (boe.isBuffer()) {
            if (!filter.passes(boe)) {
                // not the task's, nor received: a restarted producer would skip it once more
                boe.getBuffer().recycleBuffer();
                return false;
            }
            return consumer == null || consumer.accept(boe, channel);
        }
        if (consumer != null && !consumer.accept(boe, channel)) {
            return false;
        }
        if (boe.getEvent() instanceof ReplayStartEvent start) {
            long epoch = start.getEpoch();
            filter.start(epoch, restoredCheckpointId);
            if (!filter.isReplacement() && epoch != ReplayStartEvent.FROM_PRODUCER_START) {
                // A restored task waits for every upstream to announce the end of its recovered
                // state before it resumes them all. A producer that kept running announced it long
                // ago, in an epoch its log no longer has: announce it on its behalf.
                injected.add(
                        new BufferOrEvent(EndOfChannelStateEvent.INSTANCE, boe.getChannelInfo()));
                progress.recoveredStateEnded(channel);
            }
            return false;
        }
        AbstractEvent event = boe.getEvent();
        if (!filter.passes(boe) || progress.dropsRepeat(channel, event, filter.isReplacement())) {
            if (blocksUpstream(event)) {
                upstream.resume(channel);
            }
            return false;
        }
        if (event instanceof EndOfData && progress.dataEnded(channel)) {
            // A replacement producer that regenerated its predecessor's output announces the same
            // end again (Flink's union gate fails on a second one). The task acknowledged the
            // first to the lost producer; the replacement waits for an acknowledgement of its own
            // before it may finish, and the task has read everything of the channel already.
            upstream.acknowledgeAllRecordsProcessed(channel);
            return false;
        }
        if (event instanceof EndOfChannelStateEvent) {
            return endOfRecoveredState(channel, filter);
        }
        return true;
    }

    /**
     * A producer announces the end of its recovered state and waits to be resumed. The task is
     * handed the first announcement of each channel; a restarted producer's repeats it for a task
     * that counted the channel already, so it is only resumed. Where the channel's first producer
     * died before it announced anything (lost while this task started), its replacement's
     * announcement is the one the task still waits for to resume all its channels; that replacement
     * is resumed at once, since the task's later resumption of a replaced channel does not reach it
     * ({@link ClonosInputGate#resumeConsumption}).
     */
    private boolean endOfRecoveredState(int channel, RestoredCheckpointFilter filter)
            throws IOException {
        boolean first = progress.recoveredStateEnded(channel);
        if (!first || filter.isReplacement()) {
            upstream.resume(channel);
        }
        return first;
    }

    private static boolean blocksUpstream(AbstractEvent event) {
        return event instanceof CheckpointBarrier || event instanceof EndOfChannelStateEvent;
    }
}
