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

import io.clonos.runtime.causal.CausalRecovery;

import org.apache.flink.annotation.Internal;

/**
 * The logged order determinant a replay is partway through. A producer that recovers too cuts its
 * regenerated buffers elsewhere than its predecessor did, so the bytes that one determinant says
 * the predecessor read in one go can arrive in several buffers. Until the last of them is handed
 * out, no other channel may hand out anything, on this gate or on another gate of the task (Flink's
 * union of gates polls them in turn): the task's gates share one instance.
 *
 * <p>Task thread only.
 */
@Internal
public final class OrderInProgress {

    private final CausalRecovery recovery;

    /** The determinant's channel, numbered in the task's input order. */
    private int channel = -1;

    private int bytesLeft;

    public OrderInProgress(CausalRecovery recovery) {
        this.recovery = recovery;
    }

    /** Whether bytes of the determinant are still due: no other input's turn has come. */
    public boolean isOpen() {
        return bytesLeft > 0;
    }

    /** The channel whose bytes are due, numbered in the task's input order. */
    int channel() {
        return channel;
    }

    int bytesLeft() {
        return bytesLeft;
    }

    /** A determinant of {@code bytes} bytes on {@code channel} is being handed out. */
    void start(int channel, int bytes) {
        this.channel = channel;
        this.bytesLeft = bytes;
    }

    /**
     * {@code bytes} of the determinant were handed out; once all were, another gate's turn may have
     * come, which it learns from the recovery's change.
     */
    void delivered(int bytes) {
        if (bytes > bytesLeft) {
            throw new IllegalStateException(
                    "Handed out " + bytes + " bytes where " + bytesLeft + " were due");
        }
        bytesLeft -= bytes;
        if (bytesLeft == 0) {
            recovery.signalChanged();
        }
    }
}
