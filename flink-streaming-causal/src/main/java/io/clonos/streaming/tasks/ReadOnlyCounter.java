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

package io.clonos.streaming.tasks;

import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MeterView;

import java.util.function.LongSupplier;

/**
 * A counter whose count is kept elsewhere (a sum over a task's in-flight logs), so that Flink's
 * {@link MeterView} can turn it into a rate.
 */
@Internal
record ReadOnlyCounter(LongSupplier count) implements Counter {

    @Override
    public void inc() {}

    @Override
    public void inc(long n) {}

    @Override
    public void dec() {}

    @Override
    public void dec(long n) {}

    @Override
    public long getCount() {
        return count.getAsLong();
    }
}
