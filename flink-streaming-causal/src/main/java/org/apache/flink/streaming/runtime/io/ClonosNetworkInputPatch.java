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

import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.reflect.ReflectedField;
import io.clonos.streaming.input.CountedOutput;
import io.clonos.streaming.input.CountingDeserializer;
import io.clonos.streaming.input.GatedOutput;
import io.clonos.streaming.input.WatermarkReplay;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.eventtime.IndexedCombinedWatermarkStatus;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.io.network.api.serialization.RecordDeserializer;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.AbstractStreamOperatorV2;
import org.apache.flink.streaming.api.operators.InputSelectable;
import org.apache.flink.util.FlinkRuntimeException;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * PATCH of Flink's behaviour, kept to this one class in Flink's package: it reaches into a task's
 * input processor, whose deserializer map is protected (reachable from this package), whose inputs,
 * outputs and input selection are private fields (read by reflection), and into an operator's
 * private combination of its inputs' watermarks. What it puts in their place is Clonos's own
 * ({@code io.clonos.streaming.input}). It does four things:
 *
 * <ul>
 *   <li><b>Drops a channel's partial record</b> ({@link #reset}). A record can span network
 *       buffers, so when a producer dies the consumer's deserializer of the channel may hold the
 *       first part of a record whose rest will never come; the restarted producer's stream starts
 *       at a record boundary, and Flink has no hook to clear one channel's deserializer.
 *   <li><b>Counts stream elements</b> ({@link #countElements}, {@link #countSourceElements}). With
 *       causal logging a recovered task must fire each timer after exactly as many elements as its
 *       predecessor did, and Flink counts no such thing (its records-in counter skips watermarks
 *       and other elements): each channel's deserializer is swapped for one that reports every
 *       element, a source task's output for one that counts what it emits.
 *   <li><b>Reads a buffer at a time</b> ({@link BufferAtATimeSelection}) in a task with several
 *       inputs.
 *   <li><b>Gates watermarks</b> ({@link #gateWatermarks}), which depend on what an input saw before
 *       the restored checkpoint.
 * </ul>
 *
 * <p>Must run on the task thread between two polls of the gate, when no buffer is half-read.
 */
@Internal
public final class ClonosNetworkInputPatch {

    private static final ReflectedField SELECTION_HANDLER =
            ReflectedField.of(StreamMultipleInputProcessor.class, "inputSelectionHandler");
    private static final ReflectedField SELECTABLE =
            ReflectedField.of(MultipleInputSelectionHandler.class, "inputSelectable");
    private static final ReflectedField INPUT_PROCESSORS =
            ReflectedField.of(StreamMultipleInputProcessor.class, "inputProcessors");
    private static final ReflectedField ONE_INPUT_OUTPUT =
            ReflectedField.of(StreamOneInputProcessor.class, "output");
    private static final ReflectedField ONE_INPUT_INPUT =
            ReflectedField.of(StreamOneInputProcessor.class, "input");
    private static final ReflectedField COMBINED_WATERMARK =
            ReflectedField.of(AbstractStreamOperator.class, "combinedWatermark");
    private static final ReflectedField COMBINED_WATERMARK_V2 =
            ReflectedField.of(AbstractStreamOperatorV2.class, "combinedWatermark");

    private ClonosNetworkInputPatch() {}

    /** Drops the partial record of a channel, wherever it is in the processor's inputs. */
    public static void reset(StreamInputProcessor processor, InputChannelInfo channel) {
        for (StreamTaskInput<?> input : inputsOf(processor)) {
            if (input instanceof AbstractStreamTaskNetworkInput) {
                RecordDeserializer<?> deserializer =
                        ((AbstractStreamTaskNetworkInput<?, ?>) input)
                                .recordDeserializers.get(channel);
                if (deserializer != null) {
                    deserializer.clear();
                }
            }
        }
    }

    /**
     * Makes every network input of the processor call {@code beforeElement} right before it hands a
     * stream element to the operators. Call once, before the task reads its input.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static void countElements(
            StreamInputProcessor processor,
            String[] spillingDirectories,
            CausalTask task,
            @Nullable Object headOperator) {
        Runnable beforeElement = task::beforeElement;
        List<StreamTaskInput<?>> inputs = inputsOf(processor);
        boolean[] bufferInProgress = new boolean[inputs.size()];
        boolean[] sources = new boolean[inputs.size()];
        for (int i = 0; i < inputs.size(); i++) {
            sources[i] = inputs.get(i) instanceof StreamTaskSourceInput;
            StreamTaskInput<?> input = inputs.get(i);
            if (input instanceof StreamTaskNetworkInput) {
                int index = i;
                Map deserializers =
                        ((AbstractStreamTaskNetworkInput<?, ?>) input).recordDeserializers;
                deserializers.replaceAll(
                        (channel, old) ->
                                new CountingDeserializer(
                                        spillingDirectories,
                                        beforeElement,
                                        inProgress -> bufferInProgress[index] = inProgress));
            }
        }
        gateWatermarks(processor, task, headOperator, sources);
        if (processor instanceof StreamMultipleInputProcessor) {
            MultipleInputSelectionHandler flink =
                    (MultipleInputSelectionHandler) SELECTION_HANDLER.get(processor);
            InputSelectable selectable = (InputSelectable) SELECTABLE.get(flink);
            SELECTION_HANDLER.set(
                    processor,
                    new BufferAtATimeSelection(selectable, inputs.size(), bufferInProgress));
        }
    }

    /**
     * A task with several inputs reads them record by record, switching between them as their data
     * happens to arrive, so its records interleave differently on every run and the order of its
     * input buffers, which the causal log records, does not determine it. This selection reads an
     * input's buffer to its end before it switches, unless the operator selects another input: the
     * interleaving of records then follows from the order of buffers.
     */
    private static final class BufferAtATimeSelection extends MultipleInputSelectionHandler {
        private final boolean[] bufferInProgress;

        BufferAtATimeSelection(InputSelectable selectable, int inputs, boolean[] bufferInProgress) {
            super(selectable, inputs);
            this.bufferInProgress = bufferInProgress;
        }

        @Override
        int selectNextInputIndex(int lastReadInputIndex) {
            if (lastReadInputIndex >= 0
                    && bufferInProgress[lastReadInputIndex]
                    && isInputSelected(lastReadInputIndex)
                    && !isInputFinished(lastReadInputIndex)) {
                return lastReadInputIndex;
            }
            return super.selectNextInputIndex(lastReadInputIndex);
        }
    }

    /**
     * Makes the single input of a source task's processor call {@code beforeElement} right before
     * it emits a stream element. Call once, before the task runs.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static void countSourceElements(StreamInputProcessor processor, CausalTask task) {
        if (!(processor instanceof StreamOneInputProcessor)) {
            throw new IllegalStateException(
                    "A source task's input is " + processor.getClass().getName());
        }
        PushingAsyncDataInput.DataOutput output =
                (PushingAsyncDataInput.DataOutput) ONE_INPUT_OUTPUT.get(processor);
        ONE_INPUT_OUTPUT.set(processor, countingSourceOutput(output, task));
    }

    /**
     * A source's output that calls {@code beforeElement} right before it emits a stream element,
     * its watermarks gated; for a legacy source, whose function emits through an operator output
     * rather than a processor's.
     */
    public static PushingAsyncDataInput.DataOutput<?> countingSourceOutput(
            PushingAsyncDataInput.DataOutput<?> output, CausalTask task) {
        GatedOutput gated = sourceOutput(output, task, 0);
        task.watermarks()
                .setInputs(
                        1,
                        new WatermarkReplay(
                                List.of(gated),
                                (watermarks, idle) ->
                                        restoreCombinedWatermarks(null, watermarks, idle)));
        return gated;
    }

    /**
     * A source's output, whose elements are counted as they leave the source (it has no
     * deserializer to count them): its own if the gate passes them, and the logged watermarks a
     * replay hands on, as the source's own would be.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static GatedOutput sourceOutput(
            PushingAsyncDataInput.DataOutput output, CausalTask task, int input) {
        return new GatedOutput(
                new CountedOutput(output, task::beforeElement),
                new CountedOutput(output, task::countElement),
                task,
                input);
    }

    /**
     * Puts {@code wrap}'s input in place of each source chained to the processor's operator, as the
     * processor reads it; Flink's checkpoint barrier handler keeps the source's own.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static void wrapChainedSources(
            StreamInputProcessor processor,
            Function<StreamTaskSourceInput<?>, StreamTaskInput<?>> wrap) {
        for (StreamOneInputProcessor<?> one : oneInputProcessorsOf(processor)) {
            Object input = ONE_INPUT_INPUT.get(one);
            if (input instanceof StreamTaskSourceInput) {
                ONE_INPUT_INPUT.set(one, wrap.apply((StreamTaskSourceInput<?>) input));
            }
        }
    }

    /**
     * The watermarks an input hands its operators depend on what it saw before the restored
     * checkpoint: a source's watermark generator and output, and a network input's watermark valve,
     * keep state that Flink's checkpoints do not hold, and an operator with several inputs combines
     * its inputs' watermarks in a field of its own. So each input's output is gated: running
     * normally, what it hands on is logged; recovering, it hands on the logged watermarks at their
     * places and nothing of its own ({@link CausalWatermarks#watermark}); the restored epoch's
     * combination of inputs is written back into the operator.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void gateWatermarks(
            StreamInputProcessor processor,
            CausalTask task,
            @Nullable Object headOperator,
            boolean[] sources) {
        List<GatedOutput> outputs = new ArrayList<>();
        for (StreamOneInputProcessor<?> one : oneInputProcessorsOf(processor)) {
            PushingAsyncDataInput.DataOutput output =
                    (PushingAsyncDataInput.DataOutput) ONE_INPUT_OUTPUT.get(one);
            int input = outputs.size();
            GatedOutput gated =
                    sources[input]
                            ? sourceOutput(output, task, input)
                            : new GatedOutput(output, output, task, input);
            ONE_INPUT_OUTPUT.set(one, gated);
            outputs.add(gated);
        }
        task.watermarks()
                .setInputs(
                        outputs.size(),
                        new WatermarkReplay(
                                outputs,
                                (watermarks, idle) ->
                                        restoreCombinedWatermarks(headOperator, watermarks, idle)));
    }

    /** Writes the restored epoch's combination of its inputs' watermarks into the operator. */
    private static void restoreCombinedWatermarks(
            @Nullable Object headOperator, long[] watermarks, boolean[] idle) {
        Object combined = null;
        if (headOperator instanceof AbstractStreamOperator) {
            combined = COMBINED_WATERMARK.get(headOperator);
        } else if (headOperator instanceof AbstractStreamOperatorV2) {
            combined = COMBINED_WATERMARK_V2.get(headOperator);
        }
        if (!(combined instanceof IndexedCombinedWatermarkStatus)) {
            throw new FlinkRuntimeException(
                    "The task's operator "
                            + headOperator
                            + " combines no input watermarks that Clonos can restore");
        }
        IndexedCombinedWatermarkStatus status = (IndexedCombinedWatermarkStatus) combined;
        for (int i = 0; i < watermarks.length; i++) {
            status.updateWatermark(i, watermarks[i]);
            status.updateStatus(i, idle[i]);
        }
    }

    private static List<StreamTaskInput<?>> inputsOf(StreamInputProcessor processor) {
        List<StreamTaskInput<?>> inputs = new ArrayList<>();
        for (StreamOneInputProcessor<?> one : oneInputProcessorsOf(processor)) {
            inputs.add((StreamTaskInput<?>) ONE_INPUT_INPUT.get(one));
        }
        return inputs;
    }

    /** The processor's processors of one input each: itself, or those of its inputs. */
    private static List<StreamOneInputProcessor<?>> oneInputProcessorsOf(
            StreamInputProcessor processor) {
        if (processor instanceof StreamOneInputProcessor) {
            return List.of((StreamOneInputProcessor<?>) processor);
        }
        if (processor instanceof StreamMultipleInputProcessor) {
            return Arrays.asList((StreamOneInputProcessor<?>[]) INPUT_PROCESSORS.get(processor));
        }
        return List.of();
    }
}
