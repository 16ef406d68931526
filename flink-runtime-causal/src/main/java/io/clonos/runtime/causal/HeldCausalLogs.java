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

import javax.annotation.concurrent.GuardedBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The causal logs of upstream tasks that a task holds (paper section 4.3): received piggybacked on
 * its input, or handed over from downstream while it recovered. Each log is kept with its distance
 * from this task; the task forwards a log downstream while the next distance is within the
 * determinant sharing depth, so that a task's determinants survive as many consecutive failures
 * downstream of it as the depth says.
 */
@Internal
public final class HeldCausalLogs {

    @GuardedBy("this")
    private final CausalLog logs = new CausalLog();

    @GuardedBy("this")
    private final Map<CausalLogId, Integer> distances = new HashMap<>();

    /** Grows with every new byte, so that readers skip the scan when nothing changed. */
    private volatile long version;

    private final DeterminantMemory memory;

    /** Per log, the epochs whose held copy ran out of memory and ends in an overflow marker. */
    @GuardedBy("this")
    private final Map<CausalLogId, Set<Long>> overflowed = new HashMap<>();

    public HeldCausalLogs() {
        this(DeterminantMemory.unbounded());
    }

    /**
     * Holds what fits in {@code memory} of upstream logs until checkpoints truncate them ({@code
     * clonos.determinant.memory}). What does not fit is replaced by an overflow marker at the end
     * of the held epoch: the upstream task, should it fail, cannot be recovered by determinants
     * from it (unless another consumer's copy is complete, which then contradicts the marker and
     * rolls back globally too), rather than recovered from a log that misses choices whose effects
     * this task already received.
     */
    public HeldCausalLogs(DeterminantMemory memory) {
        this.memory = memory;
    }

    /** Epochs before this one were truncated: a completed checkpoint covers them. */
    @GuardedBy("this")
    private long truncatedBefore = Long.MIN_VALUE;

    /**
     * Stores a shared delta; throws if it contradicts what is held. On the task thread it may wait
     * for memory ({@link DeterminantMemory#reserve}), without holding this object's lock, which a
     * truncation needs.
     */
    public void merge(SharedDelta shared) throws CorruptCausalLogException {
        long added;
        synchronized (this) {
            added = newBytes(shared);
            if (added < 0) {
                return;
            }
            if (added == 0 || memory.tryReserve(added)) {
                mergeReserved(shared.delta(), added);
                return;
            }
            if (!memory.mayWait()) {
                endWithMarker(
                        shared.delta().log(),
                        shared.delta().epoch(),
                        logs.length(shared.delta().log(), shared.delta().epoch()));
                return;
            }
        }
        boolean fits = memory.reserve(added);
        synchronized (this) {
            CausalLogDelta delta = shared.delta();
            long now = newBytes(shared);
            if (!fits) {
                if (now > 0) {
                    endWithMarker(
                            delta.log(), delta.epoch(), logs.length(delta.log(), delta.epoch()));
                }
                return;
            }
            // while this thread waited, a truncation may have dropped the epoch
            memory.release(added - Math.max(0, now));
            if (now > 0) {
                mergeReserved(delta, now);
            }
        }
    }

    /**
     * The bytes {@code shared} would add to what is held; 0 or less when it adds nothing or is to
     * be dropped (a truncated or overflowed epoch). Records the log's distance.
     */
    @GuardedBy("this")
    private long newBytes(SharedDelta shared) throws CorruptCausalLogException {
        CausalLogDelta delta = shared.delta();
        if (delta.epoch() < truncatedBefore) {
            // a late piece of an epoch a completed checkpoint covers (a quiet connection sends
            // its part of the log later than a busy one): nobody will need it
            return -1;
        }
        distances.merge(delta.log(), shared.distance(), Math::min);
        Set<Long> full = overflowed.get(delta.log());
        if (full != null && full.contains(delta.epoch())) {
            return -1;
        }
        long held = logs.length(delta.log(), delta.epoch());
        if (delta.offset() > held) {
            throw new CorruptCausalLogException(
                    delta + " leaves a gap: " + held + " bytes of its epoch are held");
        }
        return Math.max(0, delta.end() - held);
    }

    /** Merges a delta whose new bytes are reserved; an overlap must agree with what is held. */
    @GuardedBy("this")
    private void mergeReserved(CausalLogDelta delta, long added) throws CorruptCausalLogException {
        long held = logs.length(delta.log(), delta.epoch());
        try {
            if (logs.merge(delta) > 0) {
                version++;
            }
        } catch (CorruptCausalLogException contradiction) {
            // Deltas are checksummed, so two copies that disagree are one complete and one cut
            // short by a holder's memory (its overflow marker): the held copy ends here too.
            memory.release(added);
            endWithMarker(delta.log(), delta.epoch(), held);
        }
    }

    @GuardedBy("this")
    private void endWithMarker(CausalLogId log, long epoch, long held)
            throws CorruptCausalLogException {
        byte[] marker = DeterminantEncoding.overflowMarker();
        memory.forceReserve(marker.length);
        logs.merge(new CausalLogDelta(log, epoch, held, marker));
        overflowed.computeIfAbsent(log, l -> new HashSet<>()).add(epoch);
        version++;
    }

    /** Forgets a log (its task started a log of its own). */
    public synchronized void remove(CausalLogId log) {
        long before = logs.retainedBytes();
        logs.remove(log);
        memory.release(before - logs.retainedBytes());
        distances.remove(log);
        overflowed.remove(log);
        version++;
    }

    /** Drops the epochs before {@code epoch}: checkpoint {@code epoch} completed. */
    public synchronized void truncateBefore(long epoch) {
        truncatedBefore = Math.max(truncatedBefore, epoch);
        long before = logs.retainedBytes();
        logs.truncateBefore(epoch);
        memory.release(before - logs.retainedBytes());
        overflowed.values().forEach(epochs -> epochs.removeIf(e -> e < epoch));
    }

    /** Bytes held of every log (for metrics). */
    public synchronized long retainedBytes() {
        return logs.retainedBytes();
    }

    /** Everything held of one log, with its distance from this task. */
    public synchronized List<SharedDelta> all(CausalLogId log) {
        Integer distance = distances.get(log);
        List<SharedDelta> shared = new ArrayList<>();
        if (distance != null) {
            for (CausalLogDelta delta : logs.deltasFrom(log, 0)) {
                shared.add(new SharedDelta(delta, distance));
            }
        }
        return shared;
    }

    /**
     * What a downstream connection has not been sent yet of the logs it should hold: those whose
     * distance at the receiver, one {@code remote} or local hop further than here, is within the
     * depth of {@code sharing}.
     */
    public synchronized List<SharedDelta> sharedSince(
            Reader reader, DeterminantSharing sharing, boolean remote) {
        if (reader.version == version) {
            return List.of();
        }
        reader.version = version;
        List<SharedDelta> shared = new ArrayList<>();
        for (Map.Entry<CausalLogId, Integer> entry : distances.entrySet()) {
            int distance = sharing.forwardedDistance(entry.getValue(), remote);
            if (distance < 0) {
                continue;
            }
            CausalLogId log = entry.getKey();
            long[] position = reader.positions.computeIfAbsent(log, l -> new long[] {-1, 0});
            for (long epoch : logs.epochsFrom(log, Math.max(0, position[0]))) {
                long from = epoch == position[0] ? position[1] : 0;
                Optional<CausalLogDelta> delta = logs.deltaSince(log, epoch, from);
                if (delta.isPresent()) {
                    shared.add(new SharedDelta(delta.get(), distance));
                    position[1] = delta.get().end();
                } else {
                    position[1] = from;
                }
                position[0] = epoch;
            }
        }
        return shared;
    }

    /** How far one downstream connection has been given the held logs. */
    public static final class Reader {
        private final Map<CausalLogId, long[]> positions = new HashMap<>();
        private long version = -1;
    }
}
