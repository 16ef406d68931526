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
package io.clonos.examples;

import org.apache.flink.api.common.typeinfo.TypeInformation;
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
import org.apache.flink.streaming.api.transformations.MultipleInputTransformation;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import java.util.ArrayList;
import java.util.List;

/**
 * Merges its inputs into one stream, in the order it reads them; sources among its inputs are
 * chained into its task (Flink's {@code MultipleInputStreamTask} with chained sources), so that
 * task takes their records and its network inputs' buffers as they happen to be available.
 */
public final class SourcesMerge<T> extends AbstractStreamOperatorV2<T>
        implements MultipleInputStreamOperator<T> {

    private final int inputs;

    private SourcesMerge(StreamOperatorParameters<T> parameters, int inputs) {
        super(parameters, inputs);
        this.inputs = inputs;
    }

    /** {@code streams} merged by an operator named {@code name}, their sources chained to it. */
    @SafeVarargs
    public static <T> SingleOutputStreamOperator<T> of(
            StreamExecutionEnvironment env,
            String name,
            TypeInformation<T> type,
            DataStream<T>... streams) {
        MultipleInputTransformation<T> transformation =
                new MultipleInputTransformation<>(
                        name, new Factory<>(streams.length), type, env.getParallelism());
        for (DataStream<T> stream : streams) {
            transformation.addInput(stream.getTransformation());
        }
        env.addOperator(transformation);
        return new MultipleConnectedStreams(env).transform(transformation);
    }

    @Override
    @SuppressWarnings("rawtypes")
    public List<Input> getInputs() {
        List<Input> list = new ArrayList<>();
        for (int i = 1; i <= inputs; i++) {
            list.add(
                    new AbstractInput<T, T>(this, i) {
                        @Override
                        public void processElement(StreamRecord<T> record) {
                            output.collect(record);
                        }
                    });
        }
        return list;
    }

    private static final class Factory<T> extends AbstractStreamOperatorFactory<T> {
        private final int inputs;

        Factory(int inputs) {
            this.inputs = inputs;
            setChainingStrategy(ChainingStrategy.HEAD_WITH_SOURCES);
        }

        @Override
        @SuppressWarnings("unchecked")
        public <O extends StreamOperator<T>> O createStreamOperator(
                StreamOperatorParameters<T> parameters) {
            return (O) new SourcesMerge<>(parameters, inputs);
        }

        @Override
        @SuppressWarnings("rawtypes")
        public Class<? extends StreamOperator> getStreamOperatorClass(ClassLoader classLoader) {
            return SourcesMerge.class;
        }
    }
}
