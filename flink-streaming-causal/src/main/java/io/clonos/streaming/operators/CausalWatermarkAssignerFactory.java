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

import io.clonos.streaming.causal.CausalProcessingTimeService;

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.operators.AbstractStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.OneInputStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.OperatorAttributes;
import org.apache.flink.streaming.api.operators.StreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.apache.flink.streaming.api.operators.YieldingOperatorFactory;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeServiceAware;

/**
 * Takes the place of the factory of a watermark assigner in a job (Flink's {@code
 * TimestampsAndWatermarksOperator}, the SQL planner's watermark assigner) and creates the same
 * operator, with two changes that make what it emits replayable:
 *
 * <ul>
 *   <li>its output is a {@link LoggedWatermarkOutput}: its watermark generator is in no checkpoint,
 *       so its watermarks and statuses are logged where it emits them and a replay emits the logged
 *       ones;
 *   <li>its processing-time service is Flink's, unlogged: the assigner's own timers (the periodic
 *       emission, registered afresh by every attempt at its own time) and clock readings (idleness)
 *       only decide watermarks, which reach the log where they are emitted, so they are no
 *       determinants, and a replay does not look for them.
 * </ul>
 *
 * Without causal logging the operator is Flink's, unchanged.
 */
@Internal
public final class CausalWatermarkAssignerFactory<T> extends AbstractStreamOperatorFactory<T>
        implements OneInputStreamOperatorFactory<T, T> {

    private static final long serialVersionUID = 1L;

    private final StreamOperatorFactory<T> assigner;

    public CausalWatermarkAssignerFactory(StreamOperatorFactory<T> assigner) {
        this.assigner = assigner;
        this.chainingStrategy = assigner.getChainingStrategy();
    }

    @Override
    public <O extends StreamOperator<T>> O createStreamOperator(
            StreamOperatorParameters<T> parameters) {
        ProcessingTimeService service = processingTimeService;
        if (assigner instanceof YieldingOperatorFactory) {
            ((YieldingOperatorFactory<?>) assigner)
                    .setMailboxExecutor(parameters.getMailboxExecutor());
        }
        if (!(service instanceof CausalProcessingTimeService)) {
            setTimeService(service);
            return assigner.createStreamOperator(parameters);
        }
        CausalProcessingTimeService causal = (CausalProcessingTimeService) service;
        ProcessingTimeService unlogged = causal.unlogged();
        setTimeService(unlogged);
        return assigner.createStreamOperator(
                new StreamOperatorParameters<>(
                        parameters.getContainingTask(),
                        parameters.getStreamConfig(),
                        new LoggedWatermarkOutput<>(
                                parameters.getOutput(), causal.task().watermarks()),
                        () -> unlogged,
                        parameters.getOperatorEventDispatcher(),
                        parameters.getMailboxExecutor()));
    }

    private void setTimeService(ProcessingTimeService service) {
        if (assigner instanceof ProcessingTimeServiceAware) {
            ((ProcessingTimeServiceAware) assigner).setProcessingTimeService(service);
        }
    }

    @Override
    public void setChainingStrategy(ChainingStrategy strategy) {
        super.setChainingStrategy(strategy);
        assigner.setChainingStrategy(strategy);
    }

    @Override
    @SuppressWarnings("rawtypes")
    public Class<? extends StreamOperator> getStreamOperatorClass(ClassLoader classLoader) {
        return assigner.getStreamOperatorClass(classLoader);
    }

    @Override
    public OperatorAttributes getOperatorAttributes() {
        return assigner.getOperatorAttributes();
    }
}
