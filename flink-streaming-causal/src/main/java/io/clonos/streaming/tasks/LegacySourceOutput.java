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
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.io.ClonosNetworkInputPatch;
import org.apache.flink.streaming.runtime.io.PushingAsyncDataInput;
import org.apache.flink.streaming.runtime.streamrecord.LatencyMarker;
import org.apache.flink.streaming.runtime.streamrecord.RecordAttributes;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.OutputTag;
import org.apache.flink.util.function.ThrowingRunnable;

/**
 * The output a legacy {@code SourceFunction} emits through, from a thread of its own that holds the
 * checkpoint lock, under which the task's mailbox actions (checkpoints, timers) run too. So the
 * number of elements emitted when an action takes the lock is where the action happened among them,
 * and is logged with it: every element is counted, and the watermarks gated, as for a FLIP-27
 * source ({@link ClonosNetworkInputPatch#countingSourceOutput}). While the task replays, no mailbox
 * action can come between two elements on its own; the checkpoints and timers the predecessor had
 * after an element are passed right after it, here, on the source's thread.
 */
@Internal
final class LegacySourceOutput<T> implements Output<StreamRecord<T>> {

    private final PushingAsyncDataInput.DataOutput<T> counting;
    private final Output<StreamRecord<T>> output;
    private final CausalTask task;

    @SuppressWarnings("unchecked")
    LegacySourceOutput(Output<StreamRecord<T>> output, CausalTask task) {
        this.output = output;
        this.task = task;
        this.counting =
                (PushingAsyncDataInput.DataOutput<T>)
                        ClonosNetworkInputPatch.countingSourceOutput(new Emitting<>(output), task);
    }

    @Override
    public void collect(StreamRecord<T> record) {
        emit(() -> counting.emitRecord(record));
    }

    @Override
    public <X> void collect(OutputTag<X> outputTag, StreamRecord<X> record) {
        emit(
                () -> {
                    task.beforeElement();
                    output.collect(outputTag, record);
                });
    }

    @Override
    public void emitWatermark(Watermark watermark) {
        emit(() -> counting.emitWatermark(watermark));
    }

    @Override
    public void emitWatermarkStatus(WatermarkStatus status) {
        emit(() -> counting.emitWatermarkStatus(status));
    }

    @Override
    public void emitLatencyMarker(LatencyMarker latencyMarker) {
        emit(() -> counting.emitLatencyMarker(latencyMarker));
    }

    @Override
    public void emitRecordAttributes(RecordAttributes attributes) {
        emit(() -> counting.emitRecordAttributes(attributes));
    }

    @Override
    public void close() {
        output.close();
    }

    private void emit(ThrowingRunnable<Exception> element) {
        task.onSourceThread();
        try {
            element.run();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new FlinkRuntimeException(e);
        }
        if (task.recovery().isReplaying()) {
            task.fireDueTimers();
        }
    }

    /** The operator's output, as the data output that the counting output hands elements on to. */
    private static final class Emitting<T> implements PushingAsyncDataInput.DataOutput<T> {
        private final Output<StreamRecord<T>> output;

        Emitting(Output<StreamRecord<T>> output) {
            this.output = output;
        }

        @Override
        public void emitRecord(StreamRecord<T> streamRecord) {
            output.collect(streamRecord);
        }

        @Override
        public void emitWatermark(Watermark watermark) {
            output.emitWatermark(watermark);
        }

        @Override
        public void emitWatermarkStatus(WatermarkStatus status) {
            output.emitWatermarkStatus(status);
        }

        @Override
        public void emitLatencyMarker(LatencyMarker latencyMarker) {
            output.emitLatencyMarker(latencyMarker);
        }

        @Override
        public void emitRecordAttributes(RecordAttributes attributes) {
            output.emitRecordAttributes(attributes);
        }
    }
}
