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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The causal logs a task holds: its own and, up to the determinant sharing depth, those of its
 * upstream tasks, each segmented by epoch. Deltas merge idempotently: a delta, or the part of it,
 * that the log already has changes nothing, so deltas may arrive twice or overlap (a recovered
 * task's upstream resends what it sent before). A delta that leaves a gap, or that disagrees with
 * bytes the log already has, is rejected: the log would otherwise replay something that never
 * happened.
 */
@Internal
public final class CausalLog {

    private final Map<CausalLogId, TreeMap<Long, LogSegment>> logs = new HashMap<>();

    /**
     * Appends what a delta adds.
     *
     * @return the number of bytes that were new
     * @throws CorruptCausalLogException if the delta starts after the end of what the log has, or
     *     contradicts it
     */
    public synchronized int merge(CausalLogDelta delta) throws CorruptCausalLogException {
        LogSegment epoch =
                logs.computeIfAbsent(delta.log(), id -> new TreeMap<>())
                        .computeIfAbsent(delta.epoch(), e -> new LogSegment());
        long have = epoch.size();
        if (delta.offset() > have) {
            throw new CorruptCausalLogException(
                    delta + " leaves a gap: the log has " + have + " bytes");
        }
        byte[] bytes = delta.bytes();
        int overlap = (int) Math.min(have - delta.offset(), bytes.length);
        if (!epoch.regionEquals((int) delta.offset(), bytes, 0, overlap)) {
            throw new CorruptCausalLogException(delta + " contradicts the bytes the log has");
        }
        epoch.append(bytes, overlap, bytes.length - overlap);
        return bytes.length - overlap;
    }

    /** Everything the log has of one epoch of one log, from byte {@code offset} on, as a delta. */
    public synchronized Optional<CausalLogDelta> deltaSince(
            CausalLogId log, long epoch, long offset) {
        TreeMap<Long, LogSegment> epochs = logs.get(log);
        LogSegment bytes = epochs == null ? null : epochs.get(epoch);
        if (bytes == null || bytes.size() <= offset) {
            return Optional.empty();
        }
        return Optional.of(new CausalLogDelta(log, epoch, offset, bytes.copy((int) offset)));
    }

    /** The length of one epoch of one log. */
    public synchronized long length(CausalLogId log, long epoch) {
        TreeMap<Long, LogSegment> epochs = logs.get(log);
        LogSegment bytes = epochs == null ? null : epochs.get(epoch);
        return bytes == null ? 0 : bytes.size();
    }

    /** The bytes held of every log and epoch. */
    public synchronized long retainedBytes() {
        long bytes = 0;
        for (TreeMap<Long, LogSegment> epochs : logs.values()) {
            for (LogSegment segment : epochs.values()) {
                bytes += segment.size();
            }
        }
        return bytes;
    }

    /** The epochs held of one log, from {@code epoch} on. */
    public synchronized List<Long> epochsFrom(CausalLogId log, long epoch) {
        TreeMap<Long, LogSegment> epochs = logs.get(log);
        return epochs == null ? List.of() : new ArrayList<>(epochs.tailMap(epoch, true).keySet());
    }

    /** Forgets one log entirely (its task started a log of its own). */
    public synchronized void remove(CausalLogId log) {
        logs.remove(log);
    }

    /** Drops every epoch before {@code epoch} of every log: checkpoint {@code epoch} completed. */
    public synchronized void truncateBefore(long epoch) {
        logs.values().forEach(epochs -> epochs.headMap(epoch, false).clear());
        logs.values().removeIf(TreeMap::isEmpty);
    }

    /** Every non-empty epoch of one log from {@code epoch} on, each as a delta from its start. */
    public synchronized List<CausalLogDelta> deltasFrom(CausalLogId log, long epoch) {
        TreeMap<Long, LogSegment> epochs = logs.get(log);
        List<CausalLogDelta> deltas = new ArrayList<>();
        if (epochs != null) {
            for (Map.Entry<Long, LogSegment> e : epochs.tailMap(epoch, true).entrySet()) {
                if (e.getValue().size() > 0) {
                    deltas.add(new CausalLogDelta(log, e.getKey(), 0, e.getValue().copy(0)));
                }
            }
        }
        return deltas;
    }

    /** The determinants of one epoch of one log. */
    public synchronized List<Determinant> determinants(CausalLogId log, long epoch)
            throws CorruptCausalLogException {
        Optional<CausalLogDelta> all = deltaSince(log, epoch, 0);
        return all.isPresent() ? DeterminantEncoding.decode(all.get().bytes()) : List.of();
    }
}
