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

import io.clonos.runtime.inflightlog.InFlightLog;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.api.serialization.EventSerializer;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.partition.BufferAvailabilityListener;
import org.apache.flink.runtime.io.network.partition.ResultSubpartition.BufferAndBacklog;
import org.apache.flink.runtime.io.network.partition.ResultSubpartitionView;

import javax.annotation.Nullable;

import java.io.IOException;

/**
 * What one consumer connection reads from a {@link LoggingSubpartition}: a {@link
 * ReplayStartEvent}, the in-flight log, then live data. Sequence numbers start at zero for every
 * connection, as the consumer's new input channel expects.
 *
 * <p>Flink's subpartition stops after an aligned checkpoint barrier until the consumer resumes it;
 * this view does the same for every blocking barrier it sends, replayed or live, so a consumer
 * never receives data from behind a barrier it is still aligning.
 */
@Internal
final class ReplayingSubpartitionView implements ResultSubpartitionView {

    private final LoggingSubpartition subpartition;
    private final BufferAvailabilityListener consumer;
    private final long startEpoch;
    private final SubpartitionLogMetrics metrics;

    /** Null once the replay has caught up with the live data. */
    @Nullable private InFlightLog.Cursor replay;

    private boolean startEventSent;
    private boolean blocked;
    private int sequenceNumber;
    private volatile boolean released;
    private volatile boolean detached;

    ReplayingSubpartitionView(
            LoggingSubpartition subpartition,
            BufferAvailabilityListener consumer,
            InFlightLog.Cursor replay,
            long startEpoch,
            SubpartitionLogMetrics metrics) {
        this.subpartition = subpartition;
        this.consumer = consumer;
        this.replay = replay;
        this.startEpoch = startEpoch;
        this.metrics = metrics;
    }

    @Nullable
    @Override
    public synchronized BufferAndBacklog getNextBuffer() throws IOException {
        if (released || detached || blocked) {
            return null;
        }
        if (!startEventSent) {
            startEventSent = true;
            return next(EventSerializer.toBuffer(new ReplayStartEvent(startEpoch), false));
        }
        if (replay != null) {
            Buffer replayed = replay.next();
            if (replayed != null) {
                metrics.replayed();
                return next(replayed);
            }
            replay = null;
        }
        BufferAndBacklog live = subpartition.pollLive();
        if (live == null) {
            return null;
        }
        blocked = live.buffer().getDataType().isBlockingUpstream();
        return blocked
                ? new BufferAndBacklog(live.buffer(), 0, Buffer.DataType.NONE, sequenceNumber++)
                : new BufferAndBacklog(live.buffer(), live.buffersInBacklog(), live.getNextDataType(), sequenceNumber++);
    }

    /**
     * A buffer that blocks the subpartition (an aligned barrier) announces nothing after it: the
     * consumer's channel insists on a backlog of 0 with it, since nothing follows until it resumes.
     */
    private BufferAndBacklog next(Buffer buffer) {
        blocked = buffer.getDataType().isBlockingUpstream();
        return blocked
                ? new BufferAndBacklog(buffer, 0, Buffer.DataType.NONE, sequenceNumber++)
                : new BufferAndBacklog(buffer, backlog(), nextDataType(), sequenceNumber++);
    }

    private int backlog() {
        int replayed = replay == null ? 0 : replay.remaining();
        return replayed + subpartition.source().getAvailabilityAndBacklog(false).getBacklog();
    }

    /** The type of what {@link #getNextBuffer()} would return next, NONE if nothing is ready. */
    private Buffer.DataType nextDataType() {
        if (replay != null) {
            Buffer.DataType replayed = replay.peekDataType();
            if (replayed != Buffer.DataType.NONE) {
                return replayed;
            }
        }
        ResultSubpartitionView source = subpartition.source();
        if (source.getAvailabilityAndBacklog(false).isAvailable()) {
            return Buffer.DataType.EVENT_BUFFER;
        }
        return source.getAvailabilityAndBacklog(true).isAvailable() ? Buffer.DataType.DATA_BUFFER : Buffer.DataType.NONE;
    }

    @Override
    public synchronized AvailabilityWithBacklog getAvailabilityAndBacklog(boolean isCreditAvailable) {
        if (released || detached || blocked) {
            return new AvailabilityWithBacklog(false, 0);
        }
        if (!startEventSent) {
            return new AvailabilityWithBacklog(true, backlog());
        }
        if (replay != null && replay.remaining() > 0) {
            return new AvailabilityWithBacklog(isCreditAvailable || replay.peekDataType().isEvent(), backlog());
        }
        return subpartition.source().getAvailabilityAndBacklog(isCreditAvailable);
    }

    @Override
    public void notifyDataAvailable() {
        consumer.notifyDataAvailable(this);
    }

    @Override
    public void notifyPriorityEvent(int prioritySequenceNumber) {
        consumer.notifyPriorityEvent(prioritySequenceNumber);
    }

    @Override
    public void resumeConsumption() {
        boolean caughtUp;
        synchronized (this) {
            blocked = false;
            caughtUp = replay == null || replay.remaining() == 0;
        }
        subpartition.resumeConsumption(caughtUp);
        notifyDataAvailable();
    }

    @Override
    public void acknowledgeAllDataProcessed() {
        subpartition.source().acknowledgeAllDataProcessed();
    }

    /** Another consumer took over; this one gets nothing more. */
    void detach() {
        detached = true;
    }

    @Override
    public void releaseAllResources() throws IOException {
        if (!released) {
            released = true;
            subpartition.detached(this);
        }
    }

    @Override
    public boolean isReleased() {
        return released || detached || subpartition.source().isReleased();
    }

    @Override
    public Throwable getFailureCause() {
        return subpartition.source().getFailureCause();
    }

    @Override
    public synchronized int unsynchronizedGetNumberOfQueuedBuffers() {
        return (replay == null ? 0 : replay.remaining()) + subpartition.source().unsynchronizedGetNumberOfQueuedBuffers();
    }

    @Override
    public synchronized int getNumberOfQueuedBuffers() {
        return (replay == null ? 0 : replay.remaining()) + subpartition.source().getNumberOfQueuedBuffers();
    }

    @Override
    public void notifyNewBufferSize(int newBufferSize) {
        subpartition.source().notifyNewBufferSize(newBufferSize);
    }

    @Override
    public int peekNextBufferSubpartitionId() throws IOException {
        return subpartition.source().peekNextBufferSubpartitionId();
    }
}
