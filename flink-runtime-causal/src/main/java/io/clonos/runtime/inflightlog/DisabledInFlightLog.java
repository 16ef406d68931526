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
package io.clonos.runtime.inflightlog;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.buffer.Buffer;

import javax.annotation.Nullable;

/**
 * The in-flight log of {@code clonos.in-flight-log.type: disabled}: it keeps nothing, so a consumer
 * can be served a stream only from its start, before anything was sent; any later replay is refused
 * (the scheduler rolls such jobs back globally anyway).
 */
@Internal
public final class DisabledInFlightLog implements InFlightLog {

    private long currentEpoch;
    private boolean sentAnything;

    public DisabledInFlightLog(long initialEpoch) {
        this.currentEpoch = initialEpoch;
    }

    @Override
    public synchronized void append(Buffer buffer) {
        sentAnything = true;
    }

    @Override
    public synchronized void startEpoch(long epoch) {
        currentEpoch = epoch;
    }

    @Override
    public void truncateBefore(long epoch) {}

    @Override
    public synchronized Cursor replay() throws InFlightLogUnavailableException {
        if (sentAnything) {
            throw new InFlightLogUnavailableException(
                    "In-flight logging is disabled (clonos.in-flight-log.type: disabled)");
        }
        return new Cursor() {
            @Nullable
            @Override
            public Buffer next() {
                return null;
            }

            @Override
            public Buffer.DataType peekDataType() {
                return Buffer.DataType.NONE;
            }

            @Override
            public int remaining() {
                return 0;
            }
        };
    }

    @Override
    public synchronized long oldestEpoch() {
        return currentEpoch;
    }

    @Override
    public synchronized long currentEpoch() {
        return currentEpoch;
    }

    @Override
    public long sizeInBytes() {
        return 0;
    }

    @Override
    public int numberOfBuffers() {
        return 0;
    }

    @Override
    public synchronized void invalidate(String reason) {
        sentAnything = true;
    }

    @Override
    public void close() {}
}
