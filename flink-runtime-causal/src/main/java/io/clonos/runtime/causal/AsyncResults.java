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

package io.clonos.runtime.causal;

import org.apache.flink.annotation.Internal;

import java.util.ArrayList;
import java.util.List;

/**
 * A task's async operators and their results in its log. A result is two determinants, where it
 * took effect ({@link Determinant.AsyncCompletion}) and what it was ({@link
 * Determinant.ExternalResult}), always logged together ({@link TaskCausalLog#append(Determinant,
 * Determinant)}): a consumer holds both or neither, so a replay that finds the point finds the
 * result. Task thread.
 */
@Internal
final class AsyncResults {

    private final TaskCausalLog log;
    private final CausalRecovery recovery;
    private final List<AsyncCompletionReplayer> operators = new ArrayList<>();

    AsyncResults(TaskCausalLog log, CausalRecovery recovery) {
        this.log = log;
        this.recovery = recovery;
    }

    /** Operators register in the same order in every attempt; returns the new one's id. */
    int register(AsyncCompletionReplayer operator) {
        operators.add(operator);
        return operators.size() - 1;
    }

    /** A result takes effect now, in a task that runs normally. */
    void completed(long elementsInEpoch, int callbackId, long entry, byte[] result) {
        log.append(
                new Determinant.AsyncCompletion(elementsInEpoch, callbackId, entry),
                new Determinant.ExternalResult(result));
    }

    /**
     * Replays a logged result at its point: {@code completion} was just taken from the replay; its
     * result follows it in the log.
     */
    void replay(Determinant.AsyncCompletion completion) {
        Determinant.ExternalResult result = recovery.next(Determinant.ExternalResult.class);
        if (result == null) {
            throw new LocalRecoveryImpossibleException("The log has no result for " + completion);
        }
        log.append(completion, result);
        if (completion.callbackId() >= operators.size()) {
            throw new LocalRecoveryImpossibleException(
                    "The recovered task has no async operator for " + completion);
        }
        operators.get(completion.callbackId()).complete(completion.entry(), result.bytes());
    }
}
