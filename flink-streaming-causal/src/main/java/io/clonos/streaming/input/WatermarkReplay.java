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

import io.clonos.runtime.causal.InputWatermarkState;

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.util.FlinkRuntimeException;

import java.util.List;

/**
 * Hands on the logged watermarks of a task's inputs during a replay, and restores the restored
 * epoch's combination of them in the operator that combines them.
 */
@Internal
public final class WatermarkReplay implements InputWatermarkState.Emitter {

    /** Writes the combination of its inputs' watermarks back into the task's operator. */
    @FunctionalInterface
    public interface CombinedWatermarks {
        void restore(long[] watermarks, boolean[] idle);
    }

    private final List<GatedOutput> outputs;
    private final CombinedWatermarks combined;

    public WatermarkReplay(List<GatedOutput> outputs, CombinedWatermarks combined) {
        this.outputs = outputs;
        this.combined = combined;
    }

    @Override
    public void watermark(int input, long timestamp) {
        try {
            outputs.get(input).replayed().emitWatermark(new Watermark(timestamp));
        } catch (Exception e) {
            throw new FlinkRuntimeException(
                    "Replaying watermark " + timestamp + " of input " + input + " failed", e);
        }
    }

    @Override
    public void status(int input, boolean idle) {
        try {
            outputs.get(input)
                    .replayed()
                    .emitWatermarkStatus(idle ? WatermarkStatus.IDLE : WatermarkStatus.ACTIVE);
        } catch (Exception e) {
            throw new FlinkRuntimeException(
                    "Replaying a watermark status of input " + input + " failed", e);
        }
    }

    @Override
    public void combined(long[] watermarks, boolean[] idle) {
        combined.restore(watermarks, idle);
    }
}
