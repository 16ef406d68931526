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
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The causal logs of upstream tasks that a task holds (paper section 4.3): received piggybacked
 * on its input, or handed over from downstream while it recovered. Each log is kept with its
 * distance from this task; the task forwards a log downstream while the next distance is within
 * the determinant sharing depth, so that a task's determinants survive as many consecutive
 * failures downstream of it as the depth says.
 */
@Internal
public final class HeldCausalLogs {

    @GuardedBy("this")
    private final CausalLog logs = new CausalLog();

    @GuardedBy("this")
    private final Map<CausalLogId, Integer> distances = new HashMap<>();

    /** Grows with every new byte, so that readers skip the scan when nothing changed. */
    private volatile long version;

    /** Stores a shared delta; throws if it contradicts what is held. */
    public synchronized void merge(SharedDelta shared) throws CorruptCausalLogException {
        if (logs.merge(shared.delta()) > 0) {
            version++;
        }
        distances.merge(shared.delta().log(), shared.distance(), Math::min);
    }

    /** Forgets a log (its task started a log of its own). */
    public synchronized void remove(CausalLogId log) {
        logs.remove(log);
        distances.remove(log);
        version++;
    }

    /** Drops the epochs before {@code epoch}: checkpoint {@code epoch} completed. */
    public synchronized void truncateBefore(long epoch) {
        logs.truncateBefore(epoch);
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
     * distance from the receiver, one more than from here, is at most {@code depth} (any with a
     * negative depth).
     */
    public synchronized List<SharedDelta> sharedSince(Reader reader, int depth) {
        if (reader.version == version) {
            return List.of();
        }
        reader.version = version;
        List<SharedDelta> shared = new ArrayList<>();
        for (Map.Entry<CausalLogId, Integer> entry : distances.entrySet()) {
            int distance = entry.getValue() + 1;
            if (depth >= 0 && distance > depth) {
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
