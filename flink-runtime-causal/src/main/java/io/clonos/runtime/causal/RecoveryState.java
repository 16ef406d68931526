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

/** The states of a task's recovery, in the only order they can follow one another. */
@Internal
public enum RecoveryState {
    WAITING_FOR_CONNECTIONS,
    WAITING_FOR_DETERMINANTS,
    REPLAYING,
    RUNNING;

    /**
     * Whether a recovery in this state may go on to {@code next}: forward, skipping states (all
     * answers in before the last connection; no determinants to replay), never back.
     */
    public boolean canBecome(RecoveryState next) {
        return next.ordinal() > ordinal();
    }
}
