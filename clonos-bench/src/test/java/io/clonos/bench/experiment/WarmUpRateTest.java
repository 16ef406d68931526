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

import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The overhead benchmark's sources, held to a rate during the warm-up and free after it. */
class WarmUpRateTest {

    @Test
    void aSubtaskIsHeldFromItsFirstRecordUntilTheWarmUpHasPassedThenNeverAgain() {
        AtomicInteger heldBack = new AtomicInteger();
        CompletableFuture<Void> pending = new CompletableFuture<>();
        RateLimiter held =
                () -> {
                    heldBack.incrementAndGet();
                    return pending;
                };
        AtomicLong now = new AtomicLong(50_000);
        WarmUpRate.Limiter limiter = new WarmUpRate.Limiter(held, 3_000, now::get);

        // the warm-up starts at the subtask's first record, not when the limiter was made
        now.set(60_000);
        assertThat(limiter.acquire()).isSameAs(pending);
        now.set(62_999);
        assertThat(limiter.acquire()).isSameAs(pending);
        assertThat(heldBack).hasValue(2);

        now.set(63_000);
        CompletionStage<Void> free = limiter.acquire();
        assertThat(free.toCompletableFuture()).isCompleted();
        // a clock that steps back does not hold the source again
        now.set(61_000);
        assertThat(limiter.acquire().toCompletableFuture()).isCompleted();
        assertThat(heldBack).hasValue(2);
    }

    @Test
    void aRateOrDurationThatMeansNothingIsRejected() {
        assertThatThrownBy(() -> new WarmUpRate(0, 1_000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0.0 records/s");
        assertThatThrownBy(() -> new WarmUpRate(1_000, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-1 ms");
    }
}
