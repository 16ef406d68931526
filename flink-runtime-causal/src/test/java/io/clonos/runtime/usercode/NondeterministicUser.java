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

import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;

/** User code as people write it: it reads the clock and draws random numbers from the JDK. */
public class NondeterministicUser {

    private final Random random = new Random();
    private final Random seeded = new Random(42);

    /** One element's worth of readings and draws. */
    public long[] element() {
        LongSupplier reference = System::currentTimeMillis;
        return new long[] {
            System.currentTimeMillis(),
            System.nanoTime(),
            Instant.now().toEpochMilli(),
            LocalDateTime.now().toInstant(ZoneOffset.UTC).toEpochMilli(),
            Clock.systemUTC().millis(),
            reference.getAsLong(),
            random.nextLong(),
            Double.doubleToLongBits(Math.random()),
            ThreadLocalRandom.current().nextInt(1_000_000),
            ThreadLocalRandom.current().nextLong(),
            UUID.randomUUID().getMostSignificantBits(),
            seeded.nextLong()
        };
    }

    /** A subclass of Random: its {@code super()} stays Java's. */
    public static final class OwnRandom extends Random {
        private static final long serialVersionUID = 1L;

        public OwnRandom() {
            super();
        }
    }
}
