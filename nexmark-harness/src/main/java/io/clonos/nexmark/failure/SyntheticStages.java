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

package io.clonos.nexmark.failure;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

import java.util.SplittableRandom;

/**
 * The paper's synthetic job for the failure experiment, on the Nexmark events: {@link #DEPTH} keyed
 * stateful stages, each a task of its own behind a hash shuffle (no operator fusion: every stage is
 * a layer of depth whose determinants cross the network). Every event is keyed by its id (a bid by
 * its auction's) modulo {@link #KEYS_PER_SUBTASK} times the parallelism; each stage keeps a count
 * per key and, from the key's first event on, {@code stateBytesPerKey} of incompressible padding,
 * so that each stateful subtask holds about the configured state once every key was seen. The last
 * stage emits the key and its count: a replayed or lost event changes a count, and the multiset of
 * results does not depend on how the subtasks interleave their inputs, so it can be compared with a
 * failure-free run.
 */
@Internal
final class SyntheticStages {

    /** The stateful stages, as in the paper's synthetic experiment. */
    static final int DEPTH = 5;

    /** Keys per subtask of a stage: state per subtask divided by this is the padding per key. */
    static final int KEYS_PER_SUBTASK = 1024;

    /** The name of the first stage; its first subtask's TaskManager is the one lost. */
    static final String FIRST_STAGE = "synthetic-1";

    private SyntheticStages() {}

    /** The padding per key for {@code stateMb} megabytes per stateful subtask. */
    static int stateBytesPerKey(int stateMb) {
        return (int) ((long) stateMb * 1024 * 1024 / KEYS_PER_SUBTASK);
    }

    /** The stages over the input topic's lines; the results are {@code key,count}. */
    static DataStream<String> results(
            DataStream<String> lines, int parallelism, int stateBytesPerKey) {
        long keys = (long) KEYS_PER_SUBTASK * parallelism;
        DataStream<Long> keyed =
                lines.map((MapFunction<String, Long>) line -> Math.floorMod(idOf(line), keys))
                        .returns(Types.LONG)
                        .name("synthetic-keys");
        for (int stage = 1; stage < DEPTH; stage++) {
            keyed =
                    keyed.keyBy(k -> k)
                            .process(new Stage(stateBytesPerKey, stage))
                            .returns(Types.LONG)
                            .name("synthetic-" + stage);
        }
        return keyed.keyBy(k -> k)
                .process(new LastStage(stateBytesPerKey, DEPTH))
                .returns(Types.STRING)
                .name("synthetic-" + DEPTH);
    }

    /**
     * The id a line's key comes from: a person's or an auction's own, a bid's auction's.
     *
     * @throws IllegalArgumentException for a line that is no Nexmark event
     */
    static long idOf(String line) {
        int start = line.indexOf('|');
        int end = start < 0 ? -1 : line.indexOf('|', start + 1);
        if (start != 1 || end < 0 || "PAB".indexOf(line.charAt(0)) < 0) {
            throw new IllegalArgumentException("Not a Nexmark event line: '" + line + "'");
        }
        try {
            return Long.parseLong(line, start + 1, end, 10);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Not a Nexmark event line: '" + line + "'", e);
        }
    }

    /**
     * A stage's state: counts its key's events and, from the first on, holds its padding; what it
     * emits is the subclass's.
     */
    abstract static class Counting<O> extends KeyedProcessFunction<Long, Long, O> {
        private final int stateBytesPerKey;
        private final int stage;
        private transient ValueState<Long> count;
        private transient ValueState<byte[]> padding;

        Counting(int stateBytesPerKey, int stage) {
            this.stateBytesPerKey = stateBytesPerKey;
            this.stage = stage;
        }

        @Override
        public void open(Configuration parameters) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
            padding =
                    getRuntimeContext()
                            .getState(
                                    new ValueStateDescriptor<>(
                                            "padding",
                                            PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
        }

        /** Counts the key's event; returns the count, its padding written with the first. */
        final long counted(long key) throws Exception {
            Long before = count.value();
            if (before == null && stateBytesPerKey > 0) {
                byte[] bytes = new byte[stateBytesPerKey];
                new SplittableRandom(key * DEPTH + stage).nextBytes(bytes);
                padding.update(bytes);
            }
            long now = before == null ? 1 : before + 1;
            count.update(now);
            return now;
        }
    }

    /** An inner stage: forwards the key. */
    static final class Stage extends Counting<Long> {
        Stage(int stateBytesPerKey, int stage) {
            super(stateBytesPerKey, stage);
        }

        @Override
        public void processElement(Long key, Context context, Collector<Long> out)
                throws Exception {
            counted(key);
            out.collect(key);
        }
    }

    /** The last stage: emits the key and its count. */
    static final class LastStage extends Counting<String> {
        LastStage(int stateBytesPerKey, int stage) {
            super(stateBytesPerKey, stage);
        }

        @Override
        public void processElement(Long key, Context context, Collector<String> out)
                throws Exception {
            out.collect(key + "," + counted(key));
        }
    }
}
