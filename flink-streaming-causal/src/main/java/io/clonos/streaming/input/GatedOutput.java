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

package io.clonos.streaming.input;

import io.clonos.runtime.causal.CausalTask;

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.io.PushingAsyncDataInput;
import org.apache.flink.streaming.runtime.streamrecord.LatencyMarker;
import org.apache.flink.streaming.runtime.streamrecord.RecordAttributes;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;

/**
 * One input's output to the operators, with its watermarks gated by the task's {@link
 * CausalTask#watermarks()}: running normally, what the input hands on is logged; recovering, it
 * hands on nothing of its own, and the logged watermarks go out through {@link #replayed()} at
 * their places.
 */
@Internal
@SuppressWarnings({"unchecked", "rawtypes"})
public final class GatedOutput implements PushingAsyncDataInput.DataOutput {
    private final PushingAsyncDataInput.DataOutput delegate;
    private final PushingAsyncDataInput.DataOutput replayed;
    private final CausalTask task;
    private final int input;

    /**
     * @param delegate where the input's own elements go
     * @param replayed where a replay hands on the logged watermarks (for a source, counted as its
     *     own elements are)
     * @param input the input's index among the task's inputs
     */
    public GatedOutput(
            PushingAsyncDataInput.DataOutput<?> delegate,
            PushingAsyncDataInput.DataOutput<?> replayed,
            CausalTask task,
            int input) {
        this.delegate = delegate;
        this.replayed = replayed;
        this.task = task;
        this.input = input;
    }

    /** Where a replay hands on the logged watermarks. */
    PushingAsyncDataInput.DataOutput<?> replayed() {
        return replayed;
    }

    @Override
    public void emitRecord(StreamRecord streamRecord) throws Exception {
        delegate.emitRecord(streamRecord);
    }

    @Override
    public void emitWatermark(Watermark watermark) throws Exception {
        if (task.watermarks().isInputIdle(input)) {
            // Flink's inputs hand on no watermark while idle; a recovered one may not know
            emitWatermarkStatus(WatermarkStatus.ACTIVE);
        }
        if (task.watermarks().watermark(input, watermark.getTimestamp())) {
            delegate.emitWatermark(watermark);
        }
    }

    @Override
    public void emitWatermarkStatus(WatermarkStatus watermarkStatus) throws Exception {
        if (task.watermarks().watermarkStatus(input, watermarkStatus.isIdle())) {
            delegate.emitWatermarkStatus(watermarkStatus);
        }
    }

    @Override
    public void emitLatencyMarker(LatencyMarker latencyMarker) throws Exception {
        delegate.emitLatencyMarker(latencyMarker);
    }

    @Override
    public void emitRecordAttributes(RecordAttributes recordAttributes) throws Exception {
        delegate.emitRecordAttributes(recordAttributes);
    }
}
