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

package io.clonos.streaming.tasks;

import io.clonos.runtime.causal.CausalTask;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.checkpoint.CheckpointException;
import org.apache.flink.runtime.checkpoint.channel.ChannelStateWriter;
import org.apache.flink.streaming.runtime.io.DataInputStatus;
import org.apache.flink.streaming.runtime.io.StreamInputProcessor;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * The input of a source task under causal logging. A recovering source emits nothing until its
 * consumers answered with its determinants, then fires its logged timers and passes its logged
 * checkpoints at their positions among its records; a network task does both in its input gates,
 * which a source has none of.
 */
@Internal
final class CausalSourceInput implements StreamInputProcessor {

    private final StreamInputProcessor source;
    private final CausalTask task;

    CausalSourceInput(StreamInputProcessor source, CausalTask task) {
        this.source = source;
        this.task = task;
    }

    @Override
    public DataInputStatus processInput() throws Exception {
        // the source may emit while Flink still restores the task, before its own mailbox loop
        task.processingStarted();
        task.recovery().checkDeadline();
        if (task.recovery().isWaiting()) {
            return DataInputStatus.NOTHING_AVAILABLE;
        }
        task.fireDueTimers();
        return source.processInput();
    }

    @Override
    public CompletableFuture<?> getAvailableFuture() {
        // the future first, then the check: a change in between completes it
        CompletableFuture<Void> changed = task.recovery().changed();
        if (task.recovery().isWaiting()) {
            return changed;
        }
        return source.getAvailableFuture();
    }

    @Override
    public CompletableFuture<Void> prepareSnapshot(
            ChannelStateWriter channelStateWriter, long checkpointId) throws CheckpointException {
        return source.prepareSnapshot(channelStateWriter, checkpointId);
    }

    @Override
    public void close() throws IOException {
        source.close();
    }
}
