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

import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.configuration.ClonosOptions.InFlightLogType;

import org.apache.flink.annotation.Internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;

/**
 * The in-flight logs of one TaskManager: creates each output subpartition's log by the
 * TaskManager's settings, from one memory budget and, for spillable logs, one spill directory.
 */
@Internal
public final class InFlightLogs implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(InFlightLogs.class);

    private final ClonosConfiguration settings;
    private final InFlightLogMemory memory;
    @Nullable private final InFlightLogFiles files;

    private InFlightLogs(
            ClonosConfiguration settings,
            InFlightLogMemory memory,
            @Nullable InFlightLogFiles files) {
        this.settings = settings;
        this.memory = memory;
        this.files = files;
    }

    /**
     * The logs of a TaskManager with {@code settings} and {@code networkMemoryBytes} of network
     * memory, spilling under the first of {@code tmpDirs}.
     */
    public static InFlightLogs create(
            ClonosConfiguration settings, String[] tmpDirs, long networkMemoryBytes)
            throws IOException {
        InFlightLogMemory memory =
                new InFlightLogMemory(
                        settings.getInFlightLogMemory().getBytes(),
                        overdraftBytes(settings, networkMemoryBytes));
        InFlightLogType type = settings.getInFlightLogType();
        if (type == InFlightLogType.DISABLED) {
            LOG.warn(
                    "In-flight logging is disabled (clonos.in-flight-log.type: disabled): every failure rolls its job back globally.");
        }
        InFlightLogFiles files =
                type == InFlightLogType.SPILLABLE ? InFlightLogFiles.create(tmpDirs) : null;
        return new InFlightLogs(settings, memory, files);
    }

    /**
     * The most heap a TaskManager's logs take with {@code settings} and {@code networkMemoryBytes}
     * of network memory: the budget and its overdraft; none if logging is disabled.
     */
    public static long maxHeapBytes(ClonosConfiguration settings, long networkMemoryBytes) {
        return settings.getInFlightLogType() == InFlightLogType.DISABLED
                ? 0
                : settings.getInFlightLogMemory().getBytes()
                        + overdraftBytes(settings, networkMemoryBytes);
    }

    /**
     * An {@code in-memory} log that holds its producer back takes what is queued ahead of a
     * checkpoint's barrier beyond its budget, at most about the TaskManager's network memory.
     * Spilling logs write instead.
     */
    private static long overdraftBytes(ClonosConfiguration settings, long networkMemoryBytes) {
        return canBeFull(settings) ? networkMemoryBytes : 0;
    }

    private static boolean canBeFull(ClonosConfiguration settings) {
        return settings.getInFlightLogType() == InFlightLogType.IN_MEMORY;
    }

    /** The log of the subpartition named {@code name}, starting in epoch {@code initialEpoch}. */
    public InFlightLog create(String name, long initialEpoch) {
        switch (settings.getInFlightLogType()) {
            case DISABLED:
                return new DisabledInFlightLog(initialEpoch);
            case IN_MEMORY:
                return new InMemoryInFlightLog(initialEpoch, memory);
            case SPILLABLE:
            default:
                return new SpillingInFlightLog(
                        name,
                        initialEpoch,
                        memory,
                        settings.getSpillPolicy(),
                        settings.getSpillTrigger(),
                        settings.getPrefetchBuffers(),
                        files.directoryFor(name));
        }
    }

    /** Whether these logs can be full and hold their producers back ({@code in-memory}). */
    public boolean canBeFull() {
        return canBeFull(settings);
    }

    public InFlightLogMemory memory() {
        return memory;
    }

    /** Deletes the spill directory. */
    @Override
    public void close() {
        if (files != null) {
            files.close();
        }
    }
}
