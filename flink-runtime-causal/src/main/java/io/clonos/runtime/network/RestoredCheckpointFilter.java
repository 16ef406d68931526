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

import io.clonos.runtime.causal.LocalRecoveryImpossibleException;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one connection of a consumer's channel lets through. A producer replays its in-flight log
 * from the oldest epoch it still holds; a task restored from checkpoint {@code c} must skip what
 * comes before barrier {@code c}, which its restored state already reflects. A replay that starts
 * after {@code c} lacks data the task needs: no local recovery can use it.
 *
 * <p>A replacement connection (to a restarted producer of a task that kept running) is never
 * filtered here: what it skips is settled with the producer itself ({@link
 * DeterminantResponseEvent}).
 */
@Internal
final class RestoredCheckpointFilter {

    private static final Logger LOG = LoggerFactory.getLogger(RestoredCheckpointFilter.class);

    private final String taskName;
    private final int channel;
    private final boolean replacement;
    private long skipThroughBarrier = -1;

    RestoredCheckpointFilter(String taskName, int channel, boolean replacement) {
        this.taskName = taskName;
        this.channel = channel;
        this.replacement = replacement;
    }

    /** Whether this connection replaced the one the task was deployed with. */
    boolean isReplacement() {
        return replacement;
    }

    /**
     * The producer's replay starts at {@code replayEpoch}; the task was restored from {@code
     * restoredCheckpoint} ({@link ClonosInputGate#NOT_RESTORED} if from nothing).
     *
     * @throws LocalRecoveryImpossibleException if the replay starts too late for the task
     */
    void start(long replayEpoch, long restoredCheckpoint) {
        if (replacement
                || restoredCheckpoint == ClonosInputGate.NOT_RESTORED
                || replayEpoch == ReplayStartEvent.FROM_PRODUCER_START
                || replayEpoch == restoredCheckpoint) {
            skipThroughBarrier = -1;
        } else if (replayEpoch < restoredCheckpoint) {
            skipThroughBarrier = restoredCheckpoint;
            LOG.info(
                    "Channel {} of {} skips its producer's replay from epoch {} through barrier {}, the checkpoint it was restored from.",
                    channel,
                    taskName,
                    replayEpoch,
                    restoredCheckpoint);
        } else {
            throw new LocalRecoveryImpossibleException(
                    "Channel "
                            + channel
                            + " of "
                            + taskName
                            + " was restored from checkpoint "
                            + restoredCheckpoint
                            + " but its producer can replay only from epoch "
                            + replayEpoch);
        }
    }

    /**
     * Whether the task may see {@code boe}; the barrier of the restored checkpoint itself is
     * skipped too, and nothing after it is.
     *
     * @throws LocalRecoveryImpossibleException if the replay passed that barrier without it
     */
    boolean passes(BufferOrEvent boe) {
        if (skipThroughBarrier < 0) {
            return true;
        }
        if (boe.isEvent() && boe.getEvent() instanceof CheckpointBarrier) {
            long id = ((CheckpointBarrier) boe.getEvent()).getId();
            if (id == skipThroughBarrier) {
                skipThroughBarrier = -1;
            } else if (id > skipThroughBarrier) {
                throw new LocalRecoveryImpossibleException(
                        "The replay skipped barrier " + skipThroughBarrier + " (saw " + id + ")");
            }
        }
        return false;
    }
}
