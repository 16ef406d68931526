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

import io.clonos.runtime.inflightlog.InFlightLog;

import org.apache.flink.annotation.Internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Figures of one subpartition's in-flight log, written by the network and read by the producing
 * task's metrics ({@code clonos.inFlightLogBytes}, {@code clonos.inFlightLogBytesOnDisk}, {@code
 * clonos.inFlightLogBuffers}, {@code clonos.replayedBuffers}, {@code
 * clonos.inFlightLogHeldBackMillis}, and the spill and read rates).
 */
@Internal
public final class SubpartitionLogMetrics {

    private final AtomicLong replayedBuffers = new AtomicLong();
    private final AtomicLong heldBackMillis = new AtomicLong();

    /** Read when a gauge is read, not updated with every buffer. */
    private volatile InFlightLog log;

    void attach(InFlightLog log) {
        this.log = log;
    }

    /** The log held its producer back for {@code millis}, until now. */
    void heldBack(long millis) {
        heldBackMillis.addAndGet(millis);
    }

    void replayed() {
        replayedBuffers.incrementAndGet();
    }

    public long bytes() {
        InFlightLog current = log;
        return current == null ? 0 : current.sizeInBytes();
    }

    public long buffers() {
        InFlightLog current = log;
        return current == null ? 0 : current.numberOfBuffers();
    }

    public long bytesOnDisk() {
        InFlightLog current = log;
        return current == null ? 0 : current.bytesOnDisk();
    }

    public long spilledBytes() {
        InFlightLog current = log;
        return current == null ? 0 : current.spilledBytes();
    }

    public long readBytes() {
        InFlightLog current = log;
        return current == null ? 0 : current.readBytes();
    }

    /** How long the log held its producer back, in all, not counting a hold still going on. */
    public long heldBackMillis() {
        return heldBackMillis.get();
    }

    public long replayedBuffers() {
        return replayedBuffers.get();
    }
}
