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

package io.clonos.runtime.configuration;

import org.apache.flink.annotation.Internal;

import javax.annotation.Nullable;

import java.time.Duration;

/**
 * How long the JobManager waits before it recovers a failed task locally ({@code
 * clonos.recovery.restart-delay}): always the restart strategy's delay, always a fixed one, or none
 * unless the failure repeats one whose recovery has not completed a checkpoint yet. The last is the
 * default: a recovery by determinants has no reason to wait (the restart strategy's first backoff,
 * 1 s for Flink's exponential delay, was most of the time between a loss's detection and the
 * restart), while a task that keeps failing, a crash loop, still backs off as the strategy says.
 *
 * @param fixed the fixed delay; null for the strategy's delay or the immediate restart
 * @param immediateUnlessRepeated no delay for a failure that does not repeat an unfinished
 *     recovery, the strategy's delay for one that does
 */
@Internal
public record LocalRestartDelay(@Nullable Duration fixed, boolean immediateUnlessRepeated) {

    /** {@code restart-strategy}: the restart strategy's delay, as a global restart waits. */
    public static final String RESTART_STRATEGY = "restart-strategy";

    /** {@code immediate-unless-repeated}: the default. */
    public static final String IMMEDIATE_UNLESS_REPEATED = "immediate-unless-repeated";

    static LocalRestartDelay ofRestartStrategy() {
        return new LocalRestartDelay(null, false);
    }

    static LocalRestartDelay ofImmediateUnlessRepeated() {
        return new LocalRestartDelay(null, true);
    }

    static LocalRestartDelay of(Duration fixed) {
        return new LocalRestartDelay(fixed, false);
    }

    /**
     * The delay of a local restart, in milliseconds.
     *
     * @param repeated whether a task of the restart failed again before a checkpoint completed
     *     since its last local restart
     * @param strategyDelayMillis what the restart strategy says for this failure
     */
    public long millis(boolean repeated, long strategyDelayMillis) {
        if (fixed != null) {
            return fixed.toMillis();
        }
        if (immediateUnlessRepeated && !repeated) {
            return 0;
        }
        return Math.max(strategyDelayMillis, 0);
    }

    @Override
    public String toString() {
        if (fixed != null) {
            return fixed.toMillis() + " ms";
        }
        return immediateUnlessRepeated ? IMMEDIATE_UNLESS_REPEATED : RESTART_STRATEGY;
    }
}
