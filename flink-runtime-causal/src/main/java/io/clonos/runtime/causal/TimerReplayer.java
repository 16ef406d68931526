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

/**
 * Fires a logged timer during a replay, in two steps: the timer is claimed while the task still
 * replays, and fired after its determinant was taken. Taking the replay's last determinant ends the
 * replay, and the end hands every timer still waiting to Flink's timer service; a timer claimed
 * before is not among them, so it fires once, at its logged point.
 */
@Internal
@FunctionalInterface
public interface TimerReplayer {

    /**
     * Takes the timer its predecessor fired here from those waiting (or fails the local recovery
     * when there is none); the returned action invokes it.
     */
    Runnable claim(Determinant.TimerFired timer);
}
