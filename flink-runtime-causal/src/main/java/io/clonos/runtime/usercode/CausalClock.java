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

package io.clonos.runtime.usercode;

import org.apache.flink.annotation.Internal;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;

/**
 * The system clock of user code ({@code Clock.systemUTC()}, {@code LocalDateTime.now()} and
 * friends), read through {@link CausalCalls#currentTimeMillis}.
 */
@Internal
public final class CausalClock extends Clock {

    private final ZoneId zone;

    CausalClock(ZoneId zone) {
        this.zone = zone;
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return new CausalClock(zone);
    }

    @Override
    public long millis() {
        return CausalCalls.currentTimeMillis();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CausalClock && ((CausalClock) o).zone.equals(zone);
    }

    @Override
    public int hashCode() {
        return zone.hashCode() + 1;
    }

    @Override
    public String toString() {
        return "CausalClock[" + zone + "]";
    }
}
