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

package org.apache.flink.streaming.runtime.io;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.io.network.api.serialization.RecordDeserializer;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;

/**
 * PATCH of Flink's behaviour, kept to this one class in Flink's package.
 *
 * <p>Why: a record can span network buffers, so when a producer dies the consumer's per-channel
 * deserializer may hold the first part of a record whose rest will never come. The restarted
 * producer's stream starts at a record boundary; left as it is, the stale part would be glued to
 * it. Flink has no hook to clear one channel's deserializer, so this class clears it: the
 * deserializer map is protected (reachable from this package), the inputs of a processor are
 * private fields (read by reflection).
 *
 * <p>Must run on the task thread between two polls of the gate, when no buffer is half-read.
 */
@Internal
public final class ClonosDeserializerReset {

    private ClonosDeserializerReset() {}

    /** Drops the partial record of a channel, wherever it is in the processor's inputs. */
    public static void reset(StreamInputProcessor processor, InputChannelInfo channel) {
        for (StreamTaskInput<?> input : inputsOf(processor)) {
            if (input instanceof AbstractStreamTaskNetworkInput) {
                RecordDeserializer<?> deserializer = ((AbstractStreamTaskNetworkInput<?, ?>) input).recordDeserializers.get(channel);
                if (deserializer != null) {
                    deserializer.clear();
                }
            }
        }
    }

    private static List<StreamTaskInput<?>> inputsOf(StreamInputProcessor processor) {
        List<StreamTaskInput<?>> inputs = new ArrayList<>();
        if (processor instanceof StreamOneInputProcessor) {
            inputs.add((StreamTaskInput<?>) field(processor, StreamOneInputProcessor.class, "input"));
        } else if (processor instanceof StreamMultipleInputProcessor) {
            for (StreamOneInputProcessor<?> one : (StreamOneInputProcessor<?>[]) field(processor, StreamMultipleInputProcessor.class, "inputProcessors")) {
                inputs.add((StreamTaskInput<?>) field(one, StreamOneInputProcessor.class, "input"));
            }
        }
        return inputs;
    }

    private static Object field(Object target, Class<?> declaring, String name) {
        try {
            Field field = declaring.getDeclaredField(name);
            field.setAccessible(true);
            return field.get(target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Flink's " + declaring.getSimpleName() + "." + name + " is not where Clonos expects it", e);
        }
    }
}
