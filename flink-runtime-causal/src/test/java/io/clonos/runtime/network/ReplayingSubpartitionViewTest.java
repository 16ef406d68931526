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

import io.clonos.runtime.causal.CausalLogId;
import io.clonos.runtime.causal.CausalRecovery;
import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.Determinant;
import io.clonos.runtime.causal.DeterminantEncoding;
import io.clonos.runtime.causal.SharedDelta;
import io.clonos.runtime.causal.TaskCausalLog;
import io.clonos.runtime.inflightlog.InFlightLogUnavailableException;
import io.clonos.runtime.inflightlog.InMemoryInFlightLog;

import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CheckpointType;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.api.EndOfPartitionEvent;
import org.apache.flink.runtime.io.network.api.EventAnnouncement;
import org.apache.flink.runtime.io.network.api.serialization.EventSerializer;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.buffer.FreeingBufferRecycler;
import org.apache.flink.runtime.io.network.buffer.NetworkBuffer;
import org.apache.flink.runtime.io.network.partition.BufferAvailabilityListener;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.ResultSubpartition.BufferAndBacklog;
import org.apache.flink.runtime.io.network.partition.ResultSubpartitionView;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The consumer-facing protocol of a logged subpartition, against a scripted Flink view. */
class ReplayingSubpartitionViewTest {

    private static final BufferAvailabilityListener IGNORE = view -> {};

    @Test
    void aNewConsumerGetsTheStartEpochTheLogAndThenLiveDataWithFreshSequenceNumbers()
            throws Exception {
        ScriptedView source = new ScriptedView();
        LoggingSubpartition subpartition = logging(source);
        source.add(data(1));
        source.add(data(2));

        ReplayingSubpartitionView first = subpartition.attach(IGNORE);
        assertStartEvent(first.getNextBuffer(), ReplayStartEvent.FROM_PRODUCER_START, 0);
        assertThat(valueOf(first.getNextBuffer(), 1)).isEqualTo(1);
        assertThat(valueOf(first.getNextBuffer(), 2)).isEqualTo(2);
        assertThat(first.getNextBuffer()).isNull();
        first.releaseAllResources();

        source.add(data(3));
        ReplayingSubpartitionView second = subpartition.attach(IGNORE);
        assertStartEvent(second.getNextBuffer(), ReplayStartEvent.FROM_PRODUCER_START, 0);
        assertThat(valueOf(second.getNextBuffer(), 1)).as("replayed").isEqualTo(1);
        assertThat(valueOf(second.getNextBuffer(), 2)).as("replayed").isEqualTo(2);
        assertThat(valueOf(second.getNextBuffer(), 3))
                .as("queued in Flink's subpartition: live, after the replay")
                .isEqualTo(3);
        assertThat(second.getNextBuffer()).isNull();
    }

    @Test
    void aBlockingBarrierHasNoBacklogAndStopsTheViewUntilTheConsumerResumes() throws Exception {
        ScriptedView source = new ScriptedView();
        LoggingSubpartition subpartition = logging(source);
        source.add(data(1));
        source.add(barrier(7));
        source.add(data(2));

        ReplayingSubpartitionView first = subpartition.attach(IGNORE);
        first.getNextBuffer();
        first.getNextBuffer();
        BufferAndBacklog barrier = first.getNextBuffer();
        assertThat(barrier.buffer().getDataType().isBlockingUpstream()).isTrue();
        assertThat(barrier.buffersInBacklog()).isZero();
        assertThat(first.getNextBuffer()).as("blocked until resumed").isNull();
        first.resumeConsumption();
        assertThat(source.resumed).isEqualTo(1);
        assertThat(valueOf(first.getNextBuffer(), 3)).isEqualTo(2);
        first.releaseAllResources();

        // a replacement consumer: the replayed barrier blocks the replay the same way
        ReplayingSubpartitionView second = subpartition.attach(IGNORE);
        BufferAndBacklog start = second.getNextBuffer();
        assertStartEvent(start, ReplayStartEvent.FROM_PRODUCER_START, 0);
        second.getNextBuffer();
        BufferAndBacklog replayedBarrier = second.getNextBuffer();
        assertThat(replayedBarrier.buffer().getDataType().isBlockingUpstream()).isTrue();
        assertThat(replayedBarrier.buffersInBacklog())
                .as("a remote channel rejects a backlog with a blocking barrier")
                .isZero();
        assertThat(second.getNextBuffer()).isNull();
        second.resumeConsumption();
        assertThat(source.resumed)
                .as("Flink's subpartition is not blocked: no second resume")
                .isEqualTo(1);
        assertThat(valueOf(second.getNextBuffer(), 3)).isEqualTo(2);
    }

    /**
     * A replacement consumer that lags behind its replay must not stop the producer: what the
     * producer sends meanwhile goes into the log, out of Flink's queue (whose buffers the producer
     * shares with its other consumers), and the consumer reads it there, in order, then live.
     */
    @Test
    void whileTheConsumerReadsAReplayTheProducersDataGoesIntoTheLogAndOutOfFlinksQueue()
            throws Exception {
        ScriptedView source = new ScriptedView();
        LoggingSubpartition subpartition = logging(source);
        source.add(data(1));
        source.add(data(2));
        readByAFirstConsumer(subpartition, 3);

        ReplayingSubpartitionView second = subpartition.attach(IGNORE);
        assertStartEvent(second.getNextBuffer(), ReplayStartEvent.FROM_PRODUCER_START, 0);
        assertThat(valueOf(second.getNextBuffer(), 1)).as("replayed").isEqualTo(1);
        source.add(data(3));
        source.add(data(4));
        subpartition.notifyDataAvailable(null);
        assertThat(source.queued).as("moved into the log, the producer's buffers free").isEmpty();
        assertThat(second.getAvailabilityAndBacklog(true).getBacklog()).isEqualTo(3);
        assertThat(valueOf(second.getNextBuffer(), 2)).isEqualTo(2);
        assertThat(valueOf(second.getNextBuffer(), 3)).isEqualTo(3);
        assertThat(valueOf(second.getNextBuffer(), 4)).isEqualTo(4);
        assertThat(second.getNextBuffer()).as("caught up").isNull();

        source.add(data(5));
        subpartition.notifyDataAvailable(null);
        assertThat(source.queued).as("caught up: live data stays in Flink's queue").hasSize(1);
        assertThat(valueOf(second.getNextBuffer(), 5)).isEqualTo(5);
        second.releaseAllResources();

        ReplayingSubpartitionView third = subpartition.attach(IGNORE);
        third.getNextBuffer();
        for (int i = 1; i <= 5; i++) {
            assertThat(valueOf(third.getNextBuffer(), i)).as("all of it logged once").isEqualTo(i);
        }
        assertThat(third.getNextBuffer()).isNull();
    }

    /**
     * An aligned barrier stops Flink's queue until its consumer resumes it; a barrier that goes
     * into the log does not stop the producer, and the consumer that reads it there stops as
     * before, until it resumes.
     */
    @Test
    void aBarrierMovedIntoTheLogStopsTheConsumerNotTheProducer() throws Exception {
        ScriptedView source = new ScriptedView();
        LoggingSubpartition subpartition = logging(source);
        source.add(data(1));
        readByAFirstConsumer(subpartition, 2);

        ReplayingSubpartitionView second = subpartition.attach(IGNORE);
        second.getNextBuffer();
        source.add(barrier(8));
        source.add(data(2));
        subpartition.notifyDataAvailable(null);
        assertThat(source.queued).as("past the barrier").isEmpty();
        assertThat(source.resumed).isEqualTo(1);

        assertThat(valueOf(second.getNextBuffer(), 1)).isEqualTo(1);
        BufferAndBacklog barrier = second.getNextBuffer();
        assertThat(barrier.buffer().getDataType().isBlockingUpstream()).isTrue();
        assertThat(barrier.buffersInBacklog()).isZero();
        assertThat(second.getNextBuffer()).as("the consumer aligns").isNull();
        second.resumeConsumption();
        assertThat(source.resumed).as("Flink's queue was not stopped").isEqualTo(1);
        assertThat(valueOf(second.getNextBuffer(), 3)).isEqualTo(2);
    }

    /**
     * A consumer that stays behind (the job's bottleneck) holds its producer back through Flink's
     * queue once the producer ran ahead of it by the bound; reading brings it back within the
     * bound, and what waited in Flink's queue moves into the log, in order.
     */
    @Test
    void theProducerRunsAheadOfAConsumerReadingItsReplayByAtMostTheBound() throws Exception {
        ScriptedView source = new ScriptedView();
        // two data buffers of 8 bytes
        LoggingSubpartition subpartition =
                logging(
                        new ClonosNetworkContext("test"),
                        new ResultPartitionID(),
                        source,
                        1 << 20,
                        16);
        source.add(data(1));
        source.add(data(2));
        readByAFirstConsumer(subpartition, 3);

        ReplayingSubpartitionView second = subpartition.attach(IGNORE);
        assertStartEvent(second.getNextBuffer(), ReplayStartEvent.FROM_PRODUCER_START, 0);
        source.add(data(3));
        subpartition.notifyDataAvailable(null);
        assertThat(source.queued).as("16 bytes unread: the bound").hasSize(1);

        assertThat(valueOf(second.getNextBuffer(), 1)).isEqualTo(1);
        assertThat(source.queued).as("back within the bound: moved into the log").isEmpty();
        source.add(data(4));
        subpartition.notifyDataAvailable(null);
        assertThat(source.queued).hasSize(1);
        for (int i = 2; i <= 4; i++) {
            assertThat(valueOf(second.getNextBuffer(), i)).isEqualTo(i);
        }
        assertThat(second.getNextBuffer()).isNull();
    }

    /** A buffer taken from Flink's queue that the log failed to take fails the consumer. */
    @Test
    void aConsumerReadingTheLogFailsWhenTheLogMissesWhatTheProducerSent() throws Exception {
        ScriptedView source = new ScriptedView();
        FailingLog log = new FailingLog();
        LoggingSubpartition subpartition =
                new LoggingSubpartition(
                        new ClonosNetworkContext("test"),
                        new ResultPartitionID(),
                        0,
                        log,
                        new SubpartitionLogMetrics(),
                        Long.MAX_VALUE);
        subpartition.setSource(source);
        source.add(data(1));
        readByAFirstConsumer(subpartition, 2);
        ReplayingSubpartitionView second = subpartition.attach(IGNORE);
        second.getNextBuffer();

        log.failAppends = true;
        source.add(data(2));
        subpartition.notifyDataAvailable(null);

        assertThatThrownBy(second::getNextBuffer)
                .isInstanceOf(java.io.IOException.class)
                .hasMessageContaining("lost data");
        assertThatThrownBy(() -> subpartition.attach(IGNORE))
                .as("nor does the log replay the stream with a hole")
                .isInstanceOf(InFlightLogUnavailableException.class);
    }

    @Test
    void truncationMovesTheStartEpoch() throws Exception {
        ScriptedView source = new ScriptedView();
        LoggingSubpartition subpartition = logging(source);
        source.add(data(1));
        source.add(barrier(4));
        source.add(data(2));
        ReplayingSubpartitionView first = subpartition.attach(IGNORE);
        first.getNextBuffer();
        first.getNextBuffer();
        first.getNextBuffer();
        first.resumeConsumption();
        first.getNextBuffer();
        first.releaseAllResources();

        subpartition.truncateBefore(4);

        ReplayingSubpartitionView second = subpartition.attach(IGNORE);
        assertStartEvent(second.getNextBuffer(), 4, 0);
        assertThat(valueOf(second.getNextBuffer(), 1))
                .as("only what was sent after barrier 4")
                .isEqualTo(2);
        assertThat(second.getNextBuffer()).isNull();
    }

    /**
     * A source's barrier blocks its subpartition until the consumer resumes it, so no data buffer
     * follows it for a while: the determinant of the barrier's place must travel with the barrier,
     * or a producer lost during the alignment leaves its consumers a barrier that no log explains.
     */
    @Test
    void theDeterminantBehindABarrierTravelsWithTheBarrier() throws Exception {
        ScriptedView source = new ScriptedView();
        ClonosNetworkContext context = new ClonosNetworkContext("test");
        ResultPartitionID partition = new ResultPartitionID();
        CausalLogId logId = CausalLogId.main("source", 0);
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(logId, 3),
                        CausalRecovery.notRecovering("source", logId),
                        0,
                        1,
                        -1);
        task.processingStarted();
        context.causalTasks().register(partition, task, 0, 3);
        LoggingSubpartition subpartition = logging(context, partition, source);
        ReplayingSubpartitionView view = subpartition.attach(IGNORE);
        assertStartEvent(view.getNextBuffer(), ReplayStartEvent.FROM_PRODUCER_START, 0);
        source.add(data(1));
        assertThat(eventOf(view.getNextBuffer()))
                .as("the stream is announced before any log: the consumer drops an old one's")
                .isInstanceOf(ContinuedStreamEvent.class);
        assertThat(valueOf(view.getNextBuffer(), 2)).isEqualTo(1);

        task.sourceCheckpoint(4, 0);
        source.add(barrier(4));

        Object first = eventOf(view.getNextBuffer());
        assertThat(first).isInstanceOf(CausalLogDeltaEvent.class);
        List<Determinant> shipped = new ArrayList<>();
        for (SharedDelta delta : ((CausalLogDeltaEvent) first).deltas()) {
            assertThat(delta.delta().log()).isEqualTo(logId);
            shipped.addAll(DeterminantEncoding.decode(delta.delta().bytes()));
        }
        assertThat(shipped).containsExactly(new Determinant.SourceCheckpoint(0, 4, 0));
        assertThat(eventOf(view.getNextBuffer())).isInstanceOf(CheckpointBarrier.class);
    }

    @Test
    void aFullInMemoryLogHoldsTheProducerBackAndLetsAPendingBarrierThrough() throws Exception {
        ScriptedView source = new ScriptedView();
        ClonosNetworkContext context = new ClonosNetworkContext("test");
        ResultPartitionID partition = new ResultPartitionID();
        // room for 8 data buffers, and as many of overdraft
        LoggingSubpartition subpartition = logging(context, partition, source, 64);
        AtomicLong pendingBarrier = new AtomicLong(Long.MIN_VALUE);
        context.subpartitionLogs().holdBackFullLogs();
        context.subpartitionLogs().holdBackWhenFull(partition, pendingBarrier::get);
        for (int i = 1; i <= 10; i++) {
            source.add(data(i));
        }
        source.add(barrier(1));
        source.add(data(11));
        CountDownLatch askedAgain = new CountDownLatch(1);
        ReplayingSubpartitionView view = subpartition.attach(v -> askedAgain.countDown());

        assertStartEvent(view.getNextBuffer(), ReplayStartEvent.FROM_PRODUCER_START, 0);
        for (int i = 1; i <= 8; i++) {
            assertThat(valueOf(view.getNextBuffer(), i)).isEqualTo(i);
        }
        assertThat(view.getNextBuffer()).as("held back: the log is full").isNull();
        assertThat(view.getAvailabilityAndBacklog(true).isAvailable()).isFalse();
        assertThat(source.queued).as("left in Flink's subpartition").hasSize(4);
        assertThat(askedAgain.await(10, TimeUnit.SECONDS))
                .as("the consumer is told to ask again")
                .isTrue();

        pendingBarrier.set(1);
        // (the TaskManager's announcer does the same every few milliseconds)
        subpartition.announce(1);
        assertThat(view.getAvailabilityAndBacklog(false).isAvailable())
                .as("an announcement needs no credit")
                .isTrue();
        Object announcement = eventOf(view.getNextBuffer());
        assertThat(announcement).isInstanceOf(EventAnnouncement.class);
        assertThat(
                        ((CheckpointBarrier) ((EventAnnouncement) announcement).getAnnouncedEvent())
                                .getId())
                .isEqualTo(1);
        assertThat(valueOf(view.getNextBuffer(), 10)).as("let through to the barrier").isEqualTo(9);
        assertThat(valueOf(view.getNextBuffer(), 11)).isEqualTo(10);
        assertThat(eventOf(view.getNextBuffer())).isInstanceOf(CheckpointBarrier.class);
        view.resumeConsumption();
        assertThat(view.getNextBuffer()).as("held back again past the barrier").isNull();

        subpartition.truncateBefore(1);
        assertThat(valueOf(view.getNextBuffer(), 13)).as("room after truncation").isEqualTo(11);
    }

    /** A stream's end comes after its last barrier, with none pending: it must not wait. */
    @Test
    void aFullInMemoryLogLetsEventsThrough() throws Exception {
        ScriptedView source = new ScriptedView();
        ClonosNetworkContext context = new ClonosNetworkContext("test");
        ResultPartitionID partition = new ResultPartitionID();
        LoggingSubpartition subpartition = logging(context, partition, source, 64);
        context.subpartitionLogs().holdBackFullLogs();
        context.subpartitionLogs().holdBackWhenFull(partition, () -> Long.MIN_VALUE);
        for (int i = 1; i <= 8; i++) {
            source.add(data(i));
        }
        source.add(EventSerializer.toBuffer(EndOfPartitionEvent.INSTANCE, false));
        ReplayingSubpartitionView view = subpartition.attach(IGNORE);
        view.getNextBuffer();
        for (int i = 1; i <= 8; i++) {
            view.getNextBuffer();
        }

        assertThat(eventOf(view.getNextBuffer())).isInstanceOf(EndOfPartitionEvent.class);
    }

    @Test
    void aFullInMemoryLogOfAJobWithoutCheckpointsOverflowsInsteadOfHoldingBack() throws Exception {
        ScriptedView source = new ScriptedView();
        LoggingSubpartition subpartition =
                logging(new ClonosNetworkContext("test"), new ResultPartitionID(), source, 64);
        for (int i = 1; i <= 20; i++) {
            source.add(data(i));
        }
        ReplayingSubpartitionView view = subpartition.attach(IGNORE);
        view.getNextBuffer();
        for (int i = 1; i <= 20; i++) {
            assertThat(valueOf(view.getNextBuffer(), i)).isEqualTo(i);
        }
        assertThatThrownBy(() -> subpartition.attach(IGNORE))
                .as("past its overdraft the log dropped the epoch")
                .isInstanceOf(InFlightLogUnavailableException.class);
    }

    // ------------------------------------------------------------------------------------------

    private static LoggingSubpartition logging(ScriptedView source) {
        return logging(new ClonosNetworkContext("test"), new ResultPartitionID(), source);
    }

    private static LoggingSubpartition logging(
            ClonosNetworkContext context, ResultPartitionID partition, ScriptedView source) {
        return logging(context, partition, source, 1 << 20);
    }

    private static LoggingSubpartition logging(
            ClonosNetworkContext context,
            ResultPartitionID partition,
            ScriptedView source,
            long logMemory) {
        return logging(context, partition, source, logMemory, Long.MAX_VALUE);
    }

    private static LoggingSubpartition logging(
            ClonosNetworkContext context,
            ResultPartitionID partition,
            ScriptedView source,
            long logMemory,
            long maxRunAheadBytes) {
        LoggingSubpartition subpartition =
                new LoggingSubpartition(
                        context,
                        partition,
                        0,
                        new InMemoryInFlightLog(ReplayStartEvent.FROM_PRODUCER_START, logMemory),
                        new SubpartitionLogMetrics(),
                        maxRunAheadBytes);
        subpartition.setSource(source);
        return subpartition;
    }

    /**
     * A first consumer reads {@code items} (its start event included) and goes away: the log holds
     * the data it read, for the next consumer's replay.
     */
    private static void readByAFirstConsumer(LoggingSubpartition subpartition, int items)
            throws Exception {
        ReplayingSubpartitionView first = subpartition.attach(IGNORE);
        for (int i = 0; i < items; i++) {
            first.getNextBuffer();
        }
        first.releaseAllResources();
    }

    private static void assertStartEvent(BufferAndBacklog next, long epoch, int sequenceNumber)
            throws Exception {
        assertThat(next.getSequenceNumber()).isEqualTo(sequenceNumber);
        assertThat(
                        EventSerializer.fromBuffer(
                                next.buffer(),
                                ReplayingSubpartitionViewTest.class.getClassLoader()))
                .isEqualTo(new ReplayStartEvent(epoch));
    }

    private static Object eventOf(BufferAndBacklog next) throws Exception {
        assertThat(next.buffer().isBuffer()).as("an event").isFalse();
        return EventSerializer.fromBuffer(
                next.buffer(), ReplayingSubpartitionViewTest.class.getClassLoader());
    }

    private static int valueOf(BufferAndBacklog next, int expectedSequenceNumber) {
        assertThat(next.getSequenceNumber()).isEqualTo(expectedSequenceNumber);
        assertThat(next.buffer().isBuffer()).as("data").isTrue();
        return next.buffer().getNioBufferReadable().getInt();
    }

    private static Buffer data(int value) {
        byte[] bytes = new byte[8];
        ByteBuffer.wrap(bytes).putInt(value);
        return new NetworkBuffer(
                MemorySegmentFactory.wrap(bytes),
                FreeingBufferRecycler.INSTANCE,
                Buffer.DataType.DATA_BUFFER,
                bytes.length);
    }

    private static Buffer barrier(long id) throws Exception {
        CheckpointBarrier barrier =
                new CheckpointBarrier(
                        id,
                        0,
                        CheckpointOptions.alignedNoTimeout(
                                CheckpointType.CHECKPOINT,
                                CheckpointStorageLocationReference.getDefault()));
        return EventSerializer.toBuffer(barrier, false);
    }

    /** An in-memory log whose appends fail once told to, as a full disk fails a spill. */
    private static final class FailingLog implements io.clonos.runtime.inflightlog.InFlightLog {
        private final InMemoryInFlightLog log =
                new InMemoryInFlightLog(ReplayStartEvent.FROM_PRODUCER_START, 1 << 20);
        boolean failAppends;

        @Override
        public void append(Buffer buffer) {
            if (failAppends) {
                throw new IllegalStateException("No space left on device");
            }
            log.append(buffer);
        }

        @Override
        public void startEpoch(long epoch) {
            log.startEpoch(epoch);
        }

        @Override
        public void truncateBefore(long epoch) {
            log.truncateBefore(epoch);
        }

        @Override
        public Cursor replay() throws InFlightLogUnavailableException {
            return log.replay();
        }

        @Override
        public long oldestEpoch() {
            return log.oldestEpoch();
        }

        @Override
        public long currentEpoch() {
            return log.currentEpoch();
        }

        @Override
        public long sizeInBytes() {
            return log.sizeInBytes();
        }

        @Override
        public int numberOfBuffers() {
            return log.numberOfBuffers();
        }

        @Override
        public void invalidate(String reason) {
            log.invalidate(reason);
        }

        @Override
        public void close() {
            log.close();
        }
    }

    /** Flink's view as the log sees it: hands out what the test queued; blocks after a barrier. */
    private static final class ScriptedView implements ResultSubpartitionView {
        private final Deque<Buffer> queued = new ArrayDeque<>();
        private boolean blocked;
        int resumed;

        void add(Buffer buffer) {
            queued.add(buffer);
        }

        @Override
        public BufferAndBacklog getNextBuffer() {
            if (blocked || queued.isEmpty()) {
                return null;
            }
            Buffer next = queued.poll();
            blocked = next.getDataType().isBlockingUpstream();
            return new BufferAndBacklog(
                    next,
                    blocked ? 0 : queued.size(),
                    queued.isEmpty() || blocked
                            ? Buffer.DataType.NONE
                            : queued.peek().getDataType(),
                    0);
        }

        @Override
        public void notifyDataAvailable() {}

        @Override
        public void releaseAllResources() {}

        @Override
        public boolean isReleased() {
            return false;
        }

        @Override
        public void resumeConsumption() {
            assertThat(blocked).as("resumed only when blocked").isTrue();
            blocked = false;
            resumed++;
        }

        @Override
        public void acknowledgeAllDataProcessed() {}

        @Override
        public Throwable getFailureCause() {
            return null;
        }

        @Override
        public AvailabilityWithBacklog getAvailabilityAndBacklog(boolean isCreditAvailable) {
            boolean available =
                    !blocked
                            && !queued.isEmpty()
                            && (isCreditAvailable || queued.peek().getDataType().isEvent());
            return new AvailabilityWithBacklog(available, blocked ? 0 : queued.size());
        }

        @Override
        public int unsynchronizedGetNumberOfQueuedBuffers() {
            return queued.size();
        }

        @Override
        public int getNumberOfQueuedBuffers() {
            return queued.size();
        }

        @Override
        public void notifyNewBufferSize(int newBufferSize) {}

        @Override
        public int peekNextBufferSubpartitionId() {
            return 0;
        }
    }
}
