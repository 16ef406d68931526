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

package io.clonos.runtime.network;

import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.runtime.event.RuntimeEvent;

/**
 * Follows the last buffer of a connection's replay of the producer's in-flight log: what comes
 * after it the producer sends as it produces. A restarted consumer that has this from every channel
 * has worked off the backlog its downtime left ({@link InputCatchUp}).
 *
 * <p>The consumer's Clonos input gate removes this event; Flink's tasks never see it.
 */
@Internal
public final class ReplayCaughtUpEvent extends RuntimeEvent {

    public static final ReplayCaughtUpEvent INSTANCE = new ReplayCaughtUpEvent();

    /** For deserialization. */
    public ReplayCaughtUpEvent() {}

    @Override
    public void write(DataOutputView out) {}

    @Override
    public void read(DataInputView in) {}

    @Override
    public boolean equals(Object o) {
        return o instanceof ReplayCaughtUpEvent;
    }

    @Override
    public int hashCode() {
        return ReplayCaughtUpEvent.class.hashCode();
    }

    @Override
    public String toString() {
        return "ReplayCaughtUpEvent";
    }
}
