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

import io.clonos.runtime.reflect.FlinkFields;
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

    private ClonosAsyncWaitPatch() {}

    /** Clonos's factory for what {@code flink} builds. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static CausalAsyncWaitOperatorFactory<?, ?> causalFactory(
            AsyncWaitOperatorFactory<?, ?> flink) {
        AsyncRetryStrategy retry = (AsyncRetryStrategy) read(flink, "asyncRetryStrategy");
        boolean retries =
                retry != null
                        && (retry.getRetryPredicate().resultPredicate().isPresent()
                                || retry.getRetryPredicate().exceptionPredicate().isPresent());
        AsyncFunction function = (AsyncFunction) read(flink, "asyncFunction");
        long timeout = (Long) read(flink, "timeout");
        int capacity = (Integer) read(flink, "capacity");
        AsyncDataStream.OutputMode mode = (AsyncDataStream.OutputMode) read(flink, "outputMode");
        return new CausalAsyncWaitOperatorFactory<>(
                function,
                timeout,
                capacity,
                mode == AsyncDataStream.OutputMode.ORDERED,
                retries ? retry : null);
    }

    private static Object read(AsyncWaitOperatorFactory<?, ?> factory, String name) {
        return FlinkFields.get(factory, AsyncWaitOperatorFactory.class, name);
    }
}
