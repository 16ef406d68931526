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

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.io.PushingAsyncDataInput;
import org.apache.flink.streaming.runtime.streamrecord.LatencyMarker;
import org.apache.flink.streaming.runtime.streamrecord.RecordAttributes;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;

/**
 * An input's output that counts each stream element it hands on, right before it does: a timer of a
 * recovered task fires after as many elements as it did in its predecessor.
 */
@Internal
@SuppressWarnings({"unchecked", "rawtypes"})
public final class CountedOutput implements PushingAsyncDataInput.DataOutput {
    private final PushingAsyncDataInput.DataOutput delegate;
    private final Runnable count;

    public CountedOutput(PushingAsyncDataInput.DataOutput<?> delegate, Runnable count) {
        this.delegate = delegate;
        this.count = count;
    }

    @Override
    public void emitRecord(StreamRecord streamRecord) throws Exception {
        count.run();
        delegate.emitRecord(streamRecord);
    }

    @Override
    public void emitWatermark(Watermark watermark) throws Exception {
        count.run();
        delegate.emitWatermark(watermark);
    }

    @Override
    public void emitWatermarkStatus(WatermarkStatus watermarkStatus) throws Exception {
        count.run();
        delegate.emitWatermarkStatus(watermarkStatus);
    }

    @Override
    public void emitLatencyMarker(LatencyMarker latencyMarker) throws Exception {
        count.run();
        delegate.emitLatencyMarker(latencyMarker);
    }

    @Override
    public void emitRecordAttributes(RecordAttributes recordAttributes) throws Exception {
        count.run();
        delegate.emitRecordAttributes(recordAttributes);
    }
}
