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

package io.clonos.examples;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.source.RichParallelSourceFunction;

import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The numbers 1 to {@code count}, dealt round-robin over the subtasks, as a legacy {@code
 * SourceFunction} (added with {@code addSource}) writes them: from a thread of the source's own, at
 * about {@code ratePerSecond} in all, each emitted under the checkpoint lock together with the
 * position it keeps in operator state, so that a restored subtask goes on where its checkpoint was.
 */
public final class LegacyNumbersSource extends RichParallelSourceFunction<Long>
        implements CheckpointedFunction {

    private final long count;
    private final double ratePerSecond;

    private transient ListState<Long> position;
    private transient long next;
    private volatile boolean running = true;

    public LegacyNumbersSource(long count, double ratePerSecond) {
        this.count = count;
        this.ratePerSecond = ratePerSecond;
    }

    @Override
    public void run(SourceContext<Long> context) {
        int subtasks = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
        long pauseNanos = (long) (1e9 * subtasks / ratePerSecond);
        while (running && next <= count) {
            synchronized (context.getCheckpointLock()) {
                context.collect(next);
                next += subtasks;
            }
            LockSupport.parkNanos(pauseNanos);
        }
    }

    @Override
    public void cancel() {
        running = false;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        position.update(List.of(next));
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        position =
                context.getOperatorStateStore()
                        .getListState(new ListStateDescriptor<>("next", Types.LONG));
        next = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() + 1;
        for (Long restored : position.get()) {
            next = restored;
        }
    }
}
