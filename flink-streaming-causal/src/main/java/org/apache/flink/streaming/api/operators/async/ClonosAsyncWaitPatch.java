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

package org.apache.flink.streaming.api.operators.async;

import io.clonos.runtime.reflect.ReflectedField;
import io.clonos.streaming.operators.CausalAsyncWaitOperatorFactory;

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.datastream.AsyncDataStream;
import org.apache.flink.streaming.api.functions.async.AsyncFunction;
import org.apache.flink.streaming.api.functions.async.AsyncRetryStrategy;

/**
 * <b>Patch of Flink's behaviour.</b> Reads what a job's {@link AsyncWaitOperatorFactory} was built
 * with (function, timeout, capacity, output mode, retry strategy), so that Clonos can put its
 * replayable async operator in its place. Flink keeps these in private fields without getters; they
 * are read by reflection, here only.
 */
@Internal
public final class ClonosAsyncWaitPatch {

    private static final ReflectedField RETRY_STRATEGY = factoryField("asyncRetryStrategy");
    private static final ReflectedField FUNCTION = factoryField("asyncFunction");
    private static final ReflectedField TIMEOUT = factoryField("timeout");
    private static final ReflectedField CAPACITY = factoryField("capacity");
    private static final ReflectedField OUTPUT_MODE = factoryField("outputMode");

    private ClonosAsyncWaitPatch() {}

    /** Clonos's factory for what {@code flink} builds. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static CausalAsyncWaitOperatorFactory<?, ?> causalFactory(
            AsyncWaitOperatorFactory<?, ?> flink) {
        AsyncRetryStrategy retry = (AsyncRetryStrategy) RETRY_STRATEGY.get(flink);
        boolean retries =
                retry != null
                        && (retry.getRetryPredicate().resultPredicate().isPresent()
                                || retry.getRetryPredicate().exceptionPredicate().isPresent());
        AsyncFunction function = (AsyncFunction) FUNCTION.get(flink);
        long timeout = (Long) TIMEOUT.get(flink);
        int capacity = (Integer) CAPACITY.get(flink);
        AsyncDataStream.OutputMode mode = (AsyncDataStream.OutputMode) OUTPUT_MODE.get(flink);
        return new CausalAsyncWaitOperatorFactory<>(
                function,
                timeout,
                capacity,
                mode == AsyncDataStream.OutputMode.ORDERED,
                retries ? retry : null);
    }

    private static ReflectedField factoryField(String name) {
        return ReflectedField.of(AsyncWaitOperatorFactory.class, name);
    }
}
