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

import javax.annotation.Nullable;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Holds a producer back while the in-flight log of one of its subpartitions is full ({@link
 * InFlightLog#isFull()}: an {@code in-memory} log whose budget is used up), until a completed
 * checkpoint truncates the log. Taking no more buffers from Flink's subpartition is all it takes:
 * the subpartition's queue grows, the producer's buffer pool runs dry and Flink's own backpressure
 * stops the task.
 *
 * <p>Holding back must not stop the barrier that would complete that checkpoint. The barrier is
 * queued behind data: in the producer's output, and in the inputs of the tasks downstream, which
 * reach it only by processing, and sending, what comes before it. So a subpartition lets data
 * through while its task has a barrier pending ({@link PendingBarriers}: triggered at a source, or
 * arrived in an input channel, read or not) that the subpartition has not logged yet; the log takes
 * that data in its overdraft. Once the barrier is logged the subpartition holds back again. Events
 * always pass: they are small, and a stream's end (end of data, end of partition) comes after its
 * last barrier, with no barrier pending any more. A producer that recovers is never held back: the
 * consumers it regenerates output for may need all of it before the next checkpoint can complete.
 * Nor is a producer of a job without checkpoints, which have no pending barriers to wait for (its
 * log overflows instead).
 *
 * <p>A barrier arrives in a consumer's input only if the consumer has a buffer for what is queued
 * before it; a consumer held back with its input buffers full would never see it. So every {@link
 * #RETRY_MILLIS} the producers that may be held back announce their pending barriers to their
 * consumers, ahead of the data, as Flink's {@code EventAnnouncement}: an event, which needs no
 * buffer of the consumer's, and which Flink's remote input channel notes as the barrier's arrival
 * as soon as it comes. The consumer's gate then drops it.
 *
 * <p>Nothing tells a held-back subpartition that its log has room again or that a barrier arrived,
 * so it asks again every {@link #RETRY_MILLIS} while it holds back.
 */
@Internal
final class LogBackpressure {

    static final long RETRY_MILLIS = 10;

    /** What is asked of the producer, only once its log is full. */
    interface Producer {

        /** The producing task's pending barriers; null if it is never held back. */
        @Nullable
        LongSupplier pendingBarriers();

        /** Whether the producer regenerates its predecessor's output. */
        boolean recovers();

        /** Whether the next buffer of Flink's subpartition is an event. */
        boolean sendsEvent();
    }

    private final InFlightLog log;
    private final Producer producer;
    private final SubpartitionLogMetrics metrics;
    private final Consumer<Runnable> later;
    private final Runnable retry;
    private final AtomicBoolean retryScheduled = new AtomicBoolean();

    /** When the current hold began (System.nanoTime), 0 while not holding back. */
    private volatile long heldBackSince;

    /**
     * @param later runs an action {@link #RETRY_MILLIS} from now
     * @param retry asks the subpartition again whether it has something to send
     */
    LogBackpressure(
            InFlightLog log,
            Producer producer,
            SubpartitionLogMetrics metrics,
            Consumer<Runnable> later,
            Runnable retry) {
        this.log = log;
        this.producer = producer;
        this.metrics = metrics;
        this.later = later;
        this.retry = retry;
    }

    /**
     * Whether the next buffer of Flink's subpartition may go into the log; false: the producer is
     * held back, and the subpartition is asked again later.
     */
    boolean admits() {
        if (!log.isFull() || letsThrough()) {
            long since = heldBackSince;
            if (since != 0) {
                heldBackSince = 0;
                metrics.heldBack(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since));
            }
            return true;
        }
        if (heldBackSince == 0) {
            heldBackSince = System.nanoTime();
        }
        if (retryScheduled.compareAndSet(false, true)) {
            later.accept(
                    () -> {
                        retryScheduled.set(false);
                        retry.run();
                    });
        }
        return false;
    }

    private boolean letsThrough() {
        LongSupplier pendingBarriers = producer.pendingBarriers();
        return pendingBarriers == null
                || producer.recovers()
                || pendingBarriers.getAsLong() > log.currentEpoch()
                || producer.sendsEvent();
    }
}
