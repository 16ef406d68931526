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
import org.apache.flink.runtime.io.network.api.serialization.SpillingAdaptiveSpanningRecordDeserializer;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.plugable.DeserializationDelegate;
import org.apache.flink.streaming.runtime.streamrecord.StreamElement;

import java.io.IOException;
import java.util.function.Consumer;

/**
 * Flink's deserializer of a network channel, reporting each whole element it returns (a timer of a
 * recovered task fires after as many elements as it did in its predecessor) and whether a buffer is
 * half-read (a task with several inputs reads a buffer to its end before it switches).
 */
@Internal
public final class CountingDeserializer
        extends SpillingAdaptiveSpanningRecordDeserializer<DeserializationDelegate<StreamElement>> {
    private final Runnable beforeElement;
    private final Consumer<Boolean> bufferInProgress;

    public CountingDeserializer(
            String[] spillingDirectories,
            Runnable beforeElement,
            Consumer<Boolean> bufferInProgress) {
        super(spillingDirectories);
        this.beforeElement = beforeElement;
        this.bufferInProgress = bufferInProgress;
    }

    @Override
    public void setNextBuffer(Buffer buffer) throws IOException {
        super.setNextBuffer(buffer);
        bufferInProgress.accept(true);
    }

    @Override
    public DeserializationResult getNextRecord(DeserializationDelegate<StreamElement> target)
            throws IOException {
        DeserializationResult result = super.getNextRecord(target);
        if (result.isBufferConsumed()) {
            bufferInProgress.accept(false);
        }
        if (result.isFullRecord()) {
            beforeElement.run();
        }
        return result;
    }
}
