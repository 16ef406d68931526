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

package io.clonos.runtime.standby;

import org.apache.flink.annotation.Internal;
import org.apache.flink.contrib.streaming.state.ClonosRocksDBLoadPatch;
import org.apache.flink.runtime.checkpoint.CheckpointMetaData;
import org.apache.flink.runtime.checkpoint.CheckpointMetrics;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.jobgraph.tasks.AbstractInvokable;
import org.apache.flink.runtime.operators.coordination.CoordinationRequest;
import org.apache.flink.runtime.operators.coordination.CoordinationResponse;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;
import org.apache.flink.util.FlinkException;
import org.apache.flink.util.SerializedValue;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A standby of one subtask: deployed in a slot of its own, it processes nothing. It asks the
 * scheduler, every {@link #POLL_INTERVAL_MILLIS} ms, for its primary's state in the latest
 * completed checkpoint, copies the files it does not have yet to local disk ({@link
 * StandbyStateFetcher}) and reports the copies, so that the primary's replacement restores from
 * them. It is left out of checkpoints (it has no state), and ends when its primary finished.
 */
@Internal
public final class StandbyTask extends AbstractInvokable {

    private static final Logger LOG = LoggerFactory.getLogger(StandbyTask.class);

    /** How often a standby asks for the latest completed checkpoint. */
    private static final long POLL_INTERVAL_MILLIS = 200;

    /** The directory under a tmp directory that holds the standbys' copies, per job. */
    static final String DIRECTORY = "clonos-standby";

    /** Counted down when the standby is to end: its primary finished, or it is cancelled. */
    private final CountDownLatch end = new CountDownLatch(1);

    private final OperatorID operator;
    private volatile boolean cancelled;

    /** Whether this standby had RocksDB's native library loaded for its replacement. */
    private boolean rocksDBLoaded;

    /** Given by the JobManager once the attempt runs ({@link StandbyMessages.Credentials}). */
    @Nullable private volatile String secret;

    public StandbyTask(Environment environment) {
        super(environment);
        this.operator = OperatorID.fromJobVertexID(environment.getJobVertexId());
    }

    /**
     * The directory of a standby attempt's copies, under {@link #DIRECTORY} and the job's id in a
     * tmp directory: {@link #directoryPrefix} and the attempt number.
     */
    static String directoryName(JobVertexID vertex, int subtask, int attempt) {
        return directoryPrefix(vertex, subtask) + attempt;
    }

    /** What the directories of all the attempts of one standby subtask begin with. */
    static String directoryPrefix(JobVertexID vertex, int subtask) {
        return vertex + "-" + subtask + "-";
    }

    @Override
    public void invoke() throws Exception {
        Environment env = getEnvironment();
        String subtask =
                directoryPrefix(env.getJobVertexId(), env.getTaskInfo().getIndexOfThisSubtask());
        Path directory =
                Path.of(
                        env.getTaskManagerInfo().getTmpDirectories()[0],
                        DIRECTORY,
                        env.getJobID().toHexString(),
                        directoryName(
                                env.getJobVertexId(),
                                env.getTaskInfo().getIndexOfThisSubtask(),
                                env.getTaskInfo().getAttemptNumber()));
        StandbyStateFetcher fetcher = new StandbyStateFetcher(directory);
        boolean ended = false;
        try {
            ended = standBy(env, fetcher, directory, subtask);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (ended && !cancelled) {
                // the primary finished: no replacement restores from any standby's copies
                fetcher.close();
                StandbyStateFetcher.deleteOthers(directory, subtask);
            } else {
                // the replacement of this standby's primary may restore from the copies right now
                fetcher.abandon();
            }
        }
    }

    /**
     * Holds the primary's latest state until the primary finishes (true) or the task is cancelled.
     */
    private boolean standBy(
            Environment env, StandbyStateFetcher fetcher, Path directory, String subtask)
            throws Exception {
        boolean cleaned = false;
        // the latest completed checkpoint when this standby began: a replacement may be restoring
        // from an earlier standby's copies of it
        long startedAt = Long.MAX_VALUE;
        while (true) {
            // standbys are left out of checkpoints (a waiting standby must not hold them up): they
            // ask for the latest completed one now and then instead
            if (end.await(POLL_INTERVAL_MILLIS, TimeUnit.MILLISECONDS)) {
                return true;
            }
            if (secret == null) {
                // not given by the JobManager yet
                continue;
            }
            StandbyMessages.StateResponse response =
                    (StandbyMessages.StateResponse)
                            ask(
                                    new StandbyMessages.StateRequest(
                                            env.getJobVertexId(),
                                            env.getTaskInfo().getIndexOfThisSubtask(),
                                            fetcher.checkpointId() + 1,
                                            secret));
            if (response.finish()) {
                return true;
            }
            startedAt = Math.min(startedAt, response.checkpointId());
            if (response.state() == null || response.checkpointId() <= fetcher.checkpointId()) {
                continue;
            }
            long started = System.nanoTime();
            LocalCopies copies;
            try {
                copies = fetcher.fetch(response.checkpointId(), response.state());
            } catch (StandbyStateFetcher.CheckpointGoneException gone) {
                LOG.info(
                        "{}: checkpoint {} was subsumed while it was fetched ({}); fetching the latest one, with the files copied so far.",
                        env.getTaskInfo().getTaskNameWithSubtasks(),
                        response.checkpointId(),
                        gone.getMessage());
                continue;
            }
            if (!rocksDBLoaded && !StateFiles.incrementalHandles(response.state()).isEmpty()) {
                // the replacement will open the copy with RocksDB: it need not load the library
                ClonosRocksDBLoadPatch.ensureLoaded(
                        env.getTaskManagerInfo().getTmpWorkingDirectory().getAbsolutePath());
                rocksDBLoaded = true;
            }
            LOG.debug(
                    "{} holds checkpoint {} ({} files, {} bytes fetched in all, {} ms).",
                    env.getTaskInfo().getTaskNameWithSubtasks(),
                    response.checkpointId(),
                    copies.files().size(),
                    fetcher.bytesFetched(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
            if (!cleaned && response.checkpointId() > startedAt) {
                // a checkpoint completed since this standby started: whatever restored from an
                // earlier standby's copies is running
                StandbyStateFetcher.deleteOthers(directory, subtask);
                cleaned = true;
            }
            StandbyMessages.Noted noted =
                    (StandbyMessages.Noted)
                            ask(
                                    new StandbyMessages.Fetched(
                                            env.getJobVertexId(),
                                            env.getTaskInfo().getIndexOfThisSubtask(),
                                            response.checkpointId(),
                                            copies,
                                            secret));
            if (noted.mayDropOlderCopies()) {
                fetcher.dropUnreferenced();
            }
        }
    }

    private CoordinationResponse ask(CoordinationRequest request) throws Exception {
        return getEnvironment()
                .getOperatorCoordinatorEventGateway()
                .sendRequestToCoordinator(operator, new SerializedValue<>(request))
                .get();
    }

    @Override
    public void cancel() {
        cancelled = true;
        end.countDown();
    }

    // Standbys are left out of checkpoints (ClonosCheckpointPlanPatch); should one still be
    // triggered (the patch did not apply), it acknowledges with no state rather than fail.

    @Override
    public CompletableFuture<Boolean> triggerCheckpointAsync(
            CheckpointMetaData checkpointMetaData, CheckpointOptions checkpointOptions) {
        getEnvironment()
                .acknowledgeCheckpoint(
                        checkpointMetaData.getCheckpointId(), new CheckpointMetrics());
        return CompletableFuture.completedFuture(true);
    }

    @Override
    public Future<Void> notifyCheckpointCompleteAsync(long checkpointId) {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public Future<Void> notifyCheckpointAbortAsync(
            long checkpointId, long latestCompletedCheckpointId) {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public Future<Void> notifyCheckpointSubsumedAsync(long checkpointId) {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void dispatchOperatorEvent(OperatorID operator, SerializedValue<OperatorEvent> event)
            throws FlinkException {
        try {
            OperatorEvent received = event.deserializeValue(getClass().getClassLoader());
            if (received instanceof StandbyMessages.Finish) {
                end.countDown();
            } else if (received instanceof StandbyMessages.Credentials credentials) {
                secret = credentials.secret();
            }
        } catch (Exception e) {
            throw new FlinkException("A standby cannot read an event for it", e);
        }
    }
}
