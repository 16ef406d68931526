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

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.functions.async.AsyncFunction;
import org.apache.flink.streaming.api.functions.async.AsyncRetryStrategy;
import org.apache.flink.streaming.api.operators.AbstractStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.OneInputStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.apache.flink.streaming.api.operators.YieldingOperatorFactory;

import javax.annotation.Nullable;

/**
 * Creates {@link CausalAsyncWaitOperator}s; it takes the place of Flink's async I/O factory in a
 * job.
 */
@Internal
public final class CausalAsyncWaitOperatorFactory<IN, OUT>
        extends AbstractStreamOperatorFactory<OUT>
        implements OneInputStreamOperatorFactory<IN, OUT>, YieldingOperatorFactory<OUT> {

    private static final long serialVersionUID = 1L;

    private final AsyncFunction<IN, OUT> function;
    private final long timeout;
    private final int capacity;
    private final boolean ordered;
    @Nullable private final AsyncRetryStrategy<OUT> retry;

    /** {@code retry} null for a job that does not retry. */
    public CausalAsyncWaitOperatorFactory(
            AsyncFunction<IN, OUT> function,
            long timeout,
            int capacity,
            boolean ordered,
            @Nullable AsyncRetryStrategy<OUT> retry) {
        this.function = function;
        this.timeout = timeout;
        this.capacity = capacity;
        this.ordered = ordered;
        this.retry = retry;
        this.chainingStrategy = ChainingStrategy.ALWAYS;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T extends StreamOperator<OUT>> T createStreamOperator(
            StreamOperatorParameters<OUT> parameters) {
        CausalAsyncWaitOperator<IN, OUT> operator =
                new CausalAsyncWaitOperator<>(
                        function,
                        timeout,
                        capacity,
                        ordered,
                        retry,
                        processingTimeService,
                        getMailboxExecutor());
        operator.setup(
                parameters.getContainingTask(),
                parameters.getStreamConfig(),
                parameters.getOutput());
        return (T) operator;
    }

    @Override
    @SuppressWarnings("rawtypes")
    public Class<? extends StreamOperator> getStreamOperatorClass(ClassLoader classLoader) {
        return CausalAsyncWaitOperator.class;
    }
}
