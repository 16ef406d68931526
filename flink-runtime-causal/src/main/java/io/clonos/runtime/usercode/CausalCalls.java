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

import io.clonos.runtime.causal.CausalTask;

import org.apache.flink.annotation.Internal;

import javax.annotation.Nullable;

import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What the clock and random calls of user code ({@link UserCodeRewriter}) call instead: on a Clonos
 * task's thread, the time from the task's causal log ({@link CausalTask#freshTimestamp}) and random
 * numbers from generators whose seeds it logs ({@link CausalTask#userCodeRandom}); anywhere else
 * (another thread, plain Flink, causal logging off), the JDK's own. Each method stands in for the
 * JDK method of the same name; those of a {@link ThreadLocalRandom} take the receiver first.
 *
 * <p>The clock of a task has millisecond resolution: {@link #nanoTime} is its milliseconds in
 * nanoseconds, and code that measures a duration within one element measures the ticks it read.
 */
@Internal
public final class CausalCalls {

    private CausalCalls() {}

    @Nullable
    private static CausalTask task() {
        CausalTask task = CausalTask.ofCurrentThread();
        return task != null && task.isProcessing() ? task : null;
    }

    // ------------------------------------------------------------------------------------------
    //  The clock
    // ------------------------------------------------------------------------------------------

    public static long currentTimeMillis() {
        CausalTask task = task();
        return task == null
                ? System.currentTimeMillis()
                : task.freshTimestamp(System::currentTimeMillis);
    }

    public static long nanoTime() {
        CausalTask task = task();
        return task == null
                ? System.nanoTime()
                : task.freshTimestamp(System::currentTimeMillis) * 1_000_000L;
    }

    public static Instant instantNow() {
        return Instant.ofEpochMilli(currentTimeMillis());
    }

    public static Clock systemUTC() {
        return new CausalClock(ZoneOffset.UTC);
    }

    public static Clock systemDefaultZone() {
        return new CausalClock(ZoneId.systemDefault());
    }

    public static LocalDateTime localDateTimeNow() {
        return LocalDateTime.now(systemDefaultZone());
    }

    public static LocalDateTime localDateTimeNow(ZoneId zone) {
        return LocalDateTime.now(new CausalClock(zone));
    }

    public static LocalDate localDateNow() {
        return LocalDate.now(systemDefaultZone());
    }

    public static LocalDate localDateNow(ZoneId zone) {
        return LocalDate.now(new CausalClock(zone));
    }

    public static LocalTime localTimeNow() {
        return LocalTime.now(systemDefaultZone());
    }

    public static LocalTime localTimeNow(ZoneId zone) {
        return LocalTime.now(new CausalClock(zone));
    }

    public static ZonedDateTime zonedDateTimeNow() {
        return ZonedDateTime.now(systemDefaultZone());
    }

    public static ZonedDateTime zonedDateTimeNow(ZoneId zone) {
        return ZonedDateTime.now(new CausalClock(zone));
    }

    public static OffsetDateTime offsetDateTimeNow() {
        return OffsetDateTime.now(systemDefaultZone());
    }

    public static OffsetDateTime offsetDateTimeNow(ZoneId zone) {
        return OffsetDateTime.now(new CausalClock(zone));
    }

    // ------------------------------------------------------------------------------------------
    //  Random numbers
    // ------------------------------------------------------------------------------------------

    public static double random() {
        CausalTask task = task();
        return task == null ? Math.random() : task.userCodeRandom().nextDouble();
    }

    public static UUID randomUUID() {
        CausalTask task = task();
        if (task == null) {
            return UUID.randomUUID();
        }
        Random random = task.userCodeRandom();
        // a version 4 (random) UUID of the IETF variant, as UUID#randomUUID makes
        long most = (random.nextLong() & ~0xF000L) | 0x4000L;
        long least = (random.nextLong() & ~(0xC000L << 48)) | (0x8000L << 48);
        return new UUID(most, least);
    }

    /** The generator a call on {@code threadLocal} draws from on this thread. */
    private static Random of(ThreadLocalRandom threadLocal) {
        CausalTask task = task();
        return task == null ? threadLocal : task.userCodeRandom();
    }

    public static int nextInt(ThreadLocalRandom random) {
        return of(random).nextInt();
    }

    public static int nextInt(ThreadLocalRandom random, int bound) {
        return of(random).nextInt(bound);
    }

    public static int nextInt(ThreadLocalRandom random, int origin, int bound) {
        return of(random).nextInt(origin, bound);
    }

    public static long nextLong(ThreadLocalRandom random) {
        return of(random).nextLong();
    }

    public static long nextLong(ThreadLocalRandom random, long bound) {
        return of(random).nextLong(bound);
    }

    public static long nextLong(ThreadLocalRandom random, long origin, long bound) {
        return of(random).nextLong(origin, bound);
    }

    public static double nextDouble(ThreadLocalRandom random) {
        return of(random).nextDouble();
    }

    public static double nextDouble(ThreadLocalRandom random, double bound) {
        return of(random).nextDouble(bound);
    }

    public static double nextDouble(ThreadLocalRandom random, double origin, double bound) {
        return of(random).nextDouble(origin, bound);
    }

    public static float nextFloat(ThreadLocalRandom random) {
        return of(random).nextFloat();
    }

    public static boolean nextBoolean(ThreadLocalRandom random) {
        return of(random).nextBoolean();
    }

    public static double nextGaussian(ThreadLocalRandom random) {
        return of(random).nextGaussian();
    }

    public static void nextBytes(ThreadLocalRandom random, byte[] bytes) {
        of(random).nextBytes(bytes);
    }
}
