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

package io.clonos.streaming.operators;

import io.clonos.runtime.causal.CausalWatermarks;
import io.clonos.runtime.causal.InputWatermarkState;

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.LatencyMarker;
import org.apache.flink.streaming.runtime.streamrecord.RecordAttributes;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.tasks.ClonosOutputStatusPatch;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.util.OutputTag;

/**
 * The output of a watermark assigner chained into a task, with its watermarks and statuses gated by
 * {@link CausalWatermarks}: running normally, what the assigner emits is logged at its place among
 * the task's elements; recovering, the assigner's own are dropped and the replay emits the logged
 * ones at their places ({@link InputWatermarkState.AssignerEmitter}). Records pass as they are: the
 * assigner's timestamps are a function of the record.
 */
@Internal
final class LoggedWatermarkOutput<T>
        implements Output<StreamRecord<T>>, InputWatermarkState.AssignerEmitter {

    private final Output<StreamRecord<T>> output;
    private final CausalWatermarks watermarks;
    private final int assigner;

    LoggedWatermarkOutput(Output<StreamRecord<T>> output, CausalWatermarks watermarks) {
        this.output = output;
        this.watermarks = watermarks;
        this.assigner = watermarks.addAssigner(this);
    }

    @Override
    public void collect(StreamRecord<T> record) {
        output.collect(record);
    }

    @Override
    public <X> void collect(OutputTag<X> outputTag, StreamRecord<X> record) {
        output.collect(outputTag, record);
    }

    @Override
    public void emitWatermark(Watermark mark) {
        if (watermarks.isAssignerIdle(assigner)) {
            // Flink's assigner emits no watermark while idle; a recovered one may not know it was
            emitWatermarkStatus(WatermarkStatus.ACTIVE);
        }
        if (watermarks.assignerWatermark(assigner, mark.getTimestamp())) {
            output.emitWatermark(mark);
        }
    }

    @Override
    public void emitWatermarkStatus(WatermarkStatus watermarkStatus) {
        if (watermarks.assignerStatus(assigner, watermarkStatus.isIdle())) {
            output.emitWatermarkStatus(watermarkStatus);
        }
    }

    @Override
    public void emitLatencyMarker(LatencyMarker latencyMarker) {
        output.emitLatencyMarker(latencyMarker);
    }

    @Override
    public void emitRecordAttributes(RecordAttributes recordAttributes) {
        output.emitRecordAttributes(recordAttributes);
    }

    @Override
    public void close() {
        output.close();
    }

    // ------------------------------------------------------------------------------------------
    //  The replay
    // ------------------------------------------------------------------------------------------

    @Override
    public void watermark(long timestamp) {
        output.emitWatermark(new Watermark(timestamp));
    }

    @Override
    public void status(boolean idle) {
        output.emitWatermarkStatus(idle ? WatermarkStatus.IDLE : WatermarkStatus.ACTIVE);
    }

    @Override
    public void restoreStatus(boolean idle) {
        ClonosOutputStatusPatch.announceBehind(
                output, idle ? WatermarkStatus.IDLE : WatermarkStatus.ACTIVE);
    }
}
