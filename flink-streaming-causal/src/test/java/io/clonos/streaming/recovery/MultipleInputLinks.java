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

package io.clonos.streaming.recovery;

import io.clonos.examples.HashChains;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.MultipleConnectedStreams;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.AbstractInput;
import org.apache.flink.streaming.api.operators.AbstractStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.AbstractStreamOperatorV2;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.Input;
import org.apache.flink.streaming.api.operators.MultipleInputStreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.apache.flink.streaming.api.transformations.KeyedMultipleInputTransformation;
import org.apache.flink.streaming.api.transformations.MultipleInputTransformation;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import java.util.ArrayList;
import java.util.List;

/**
 * An operator with several inputs, as Flink runs it in a {@code MultipleInputStreamTask}. Keyed, it
 * extends one hash chain per key with the records of all its inputs in the order it reads them (so
 * its output depends on how they interleave); not keyed, it passes each record's input name on.
 */
public final class MultipleInputLinks extends AbstractStreamOperatorV2<String>
        implements MultipleInputStreamOperator<String> {

    private final String name;
    private final int inputs;
    private transient ValueState<Tuple2<Long, Long>> chain;
    private long seen;

    private MultipleInputLinks(
            StreamOperatorParameters<String> parameters, int inputs, String name) {
        super(parameters, inputs);
        this.name = name;
        this.inputs = inputs;
    }

    /** {@code streams} keyed by their first field into one keyed operator named {@code name}. */
    @SafeVarargs
    public static SingleOutputStreamOperator<String> keyed(
            StreamExecutionEnvironment env,
            String name,
            DataStream<Tuple3<Long, String, Long>>... streams) {
        KeyedMultipleInputTransformation<String> transformation =
                new KeyedMultipleInputTransformation<>(
                        name,
                        new Factory(name, streams.length, ChainingStrategy.ALWAYS),
                        Types.STRING,
                        env.getParallelism(),
                        Types.LONG);
        for (DataStream<Tuple3<Long, String, Long>> stream : streams) {
            // the key selector is the state's; the records are partitioned by the input's keyBy
            transformation.addInput(
                    stream.keyBy(new FirstField()).getTransformation(), new FirstField());
        }
        env.addOperator(transformation);
        return new MultipleConnectedStreams(env).transform(transformation);
    }

    /**
     * {@code streams} forward into one operator named {@code name} that takes sources as chained
     * inputs: Flink chains a source stream among them into the operator's task.
     */
    @SafeVarargs
    public static SingleOutputStreamOperator<String> withChainedSources(
            StreamExecutionEnvironment env,
            String name,
            DataStream<Tuple3<Long, String, Long>>... streams) {
        MultipleInputTransformation<String> transformation =
                new MultipleInputTransformation<>(
                        name,
                        new Factory(name, streams.length, ChainingStrategy.HEAD_WITH_SOURCES),
                        Types.STRING,
                        env.getParallelism());
        for (DataStream<Tuple3<Long, String, Long>> stream : streams) {
            transformation.addInput(stream.getTransformation());
        }
        env.addOperator(transformation);
        return new MultipleConnectedStreams(env).transform(transformation);
    }

    @Override
    public void open() throws Exception {
        super.open();
        if (getKeyedStateBackend() != null) {
            chain =
                    getPartitionedState(
                            new ValueStateDescriptor<>(
                                    "seq-and-digest", Types.TUPLE(Types.LONG, Types.LONG)));
        }
    }

    @Override
    @SuppressWarnings("rawtypes")
    public List<Input> getInputs() {
        List<Input> list = new ArrayList<>();
        for (int i = 1; i <= inputs; i++) {
            list.add(
                    new AbstractInput<Tuple3<Long, String, Long>, String>(this, i) {
                        @Override
                        public void processElement(StreamRecord<Tuple3<Long, String, Long>> record)
                                throws Exception {
                            link(record.getValue());
                        }
                    });
        }
        return list;
    }

    private void link(Tuple3<Long, String, Long> in) throws Exception {
        ExactlyOnceITCase.maybeFail(getRuntimeContext(), name, ++seen);
        String out =
                chain == null
                        ? in.f1
                        : HashChains.link(
                                chain, in.f0, HashChains.mix(in.f2, in.f1.hashCode()), in.f1);
        output.collect(new StreamRecord<>(out));
    }

    private static final class FirstField implements KeySelector<Tuple3<Long, String, Long>, Long> {
        @Override
        public Long getKey(Tuple3<Long, String, Long> value) {
            return value.f0;
        }
    }

    private static final class Factory extends AbstractStreamOperatorFactory<String> {
        private final String name;
        private final int inputs;

        Factory(String name, int inputs, ChainingStrategy chaining) {
            this.name = name;
            this.inputs = inputs;
            setChainingStrategy(chaining);
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T extends StreamOperator<String>> T createStreamOperator(
                StreamOperatorParameters<String> parameters) {
            return (T) new MultipleInputLinks(parameters, inputs, name);
        }

        @Override
        @SuppressWarnings("rawtypes")
        public Class<? extends StreamOperator> getStreamOperatorClass(ClassLoader classLoader) {
            return MultipleInputLinks.class;
        }
    }
}
