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
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.streaming.api.functions.async.AsyncRetryPredicate;
import org.apache.flink.streaming.api.functions.async.AsyncRetryStrategy;
import org.apache.flink.util.function.ThrowingRunnable;

import javax.annotation.Nullable;

import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The job's {@link AsyncRetryStrategy} as {@link CausalAsyncWaitOperator} applies it: which result
 * or failure is retried, and the back-off before the new call. The back-off runs outside the task's
 * logged timers, since a replay has no retry to time. Task thread, running normally.
 */
@Internal
final class AsyncRetries<OUT> {

    /** The strategy; null when the job does not retry. */
    @Nullable private final AsyncRetryStrategy<OUT> strategy;

    /** Set at the end of input: the retries due are made at once, and no more are scheduled. */
    private boolean stopped;

    AsyncRetries(@Nullable AsyncRetryStrategy<OUT> strategy) {
        this.strategy = strategy;
    }

    void stop() {
        stopped = true;
    }

    /**
     * Whether attempt {@code attempt} of a record is retried after its {@code results} or its
     * {@code error}. The predicates are the user's code.
     */
    boolean retries(int attempt, @Nullable Collection<OUT> results, @Nullable Throwable error) {
        if (strategy == null || stopped || !strategy.canRetry(attempt)) {
            return false;
        }
        AsyncRetryPredicate<OUT> predicate = strategy.getRetryPredicate();
        return results != null
                ? predicate.resultPredicate().map(p -> p.test(results)).orElse(false)
                : predicate.exceptionPredicate().map(p -> p.test(error)).orElse(false);
    }

    /** Runs {@code retry} in the task's mailbox once the back-off after {@code attempt} passed. */
    void afterBackoff(
            int attempt, MailboxExecutor mailbox, ThrowingRunnable<? extends Exception> retry) {
        CompletableFuture.delayedExecutor(
                        strategy.getBackoffTimeMillis(attempt), TimeUnit.MILLISECONDS)
                .execute(
                        () -> {
                            try {
                                mailbox.execute(retry, "retry an async I/O call");
                            } catch (RejectedExecutionException closed) {
                                // the task ends; the record is called again after a restore
                            }
                        });
    }
}
