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

package io.clonos.bench.experiment;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.util.ratelimit.GuavaRateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;

/**
 * Holds the overhead benchmark's sources to a rate for the first part of the warm-up, then lets
 * them run as fast as the job takes their records. On two cores a job at full speed leaves the JIT
 * compilers little CPU: the hot code of a run stayed in its profiling tier for 10 s and more, a
 * different length in every JVM, and the steady state then measured the compilers' backlog as much
 * as the system. Held back, the job leaves them the CPU to compile what it runs; every system is
 * held back alike.
 */
@Internal
final class WarmUpRate implements RateLimiterStrategy {
    private static final long serialVersionUID = 1L;

    private final double recordsPerSecond;
    private final long millis;

    /**
     * {@code recordsPerSecond} over all subtasks, for {@code millis} from each subtask's first
     * record.
     */
    WarmUpRate(double recordsPerSecond, long millis) {
        if (recordsPerSecond <= 0 || millis < 0) {
            throw new IllegalArgumentException(
                    "A warm-up rate needs a positive rate and a duration, got "
                            + recordsPerSecond
                            + " records/s for "
                            + millis
                            + " ms");
        }
        this.recordsPerSecond = recordsPerSecond;
        this.millis = millis;
    }

    @Override
    public RateLimiter createRateLimiter(int parallelism) {
        return new Limiter(
                new GuavaRateLimiter(recordsPerSecond / parallelism),
                millis,
                System::currentTimeMillis);
    }

    /** One subtask's limiter: the rate until the warm-up has passed, nothing after. */
    static final class Limiter implements RateLimiter {
        private static final CompletionStage<Void> FREE = CompletableFuture.completedFuture(null);

        private final RateLimiter held;
        private final long millis;
        private final LongSupplier clock;
        private long until = -1;
        private boolean passed;

        Limiter(RateLimiter held, long millis, LongSupplier clock) {
            this.held = held;
            this.millis = millis;
            this.clock = clock;
        }

        @Override
        public CompletionStage<Void> acquire() {
            if (passed) {
                return FREE;
            }
            long now = clock.getAsLong();
            if (until < 0) {
                until = now + millis;
            }
            if (now >= until) {
                passed = true;
                return FREE;
            }
            return held.acquire();
        }
    }
}
