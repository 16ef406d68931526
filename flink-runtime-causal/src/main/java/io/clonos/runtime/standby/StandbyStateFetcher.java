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

package io.clonos.runtime.standby;

import org.apache.flink.annotation.Internal;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.checkpoint.TaskStateSnapshot;
import org.apache.flink.runtime.state.PhysicalStateHandleID;
import org.apache.flink.runtime.state.StreamStateHandle;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * A standby's local copy of one subtask's state, refreshed after every completed checkpoint: it
 * fetches the files of the checkpoint it has not fetched yet (with incremental RocksDB
 * checkpoints, only the new SST files); the ones no longer referenced go when the JobManager
 * knows of the new copies ({@link #dropUnreferenced}). What it hands
 * out is the copies by the id of the file they copy: at the standby's activation the JobManager
 * swaps them into the state Flink assigns the task ({@link StateFiles#localize}), which then
 * restores from local disk.
 *
 * <p>A fetch that fails leaves the previous checkpoint's copy intact. Not thread-safe beyond its
 * synchronized methods: one fetch at a time.
 */
@Internal
public final class StandbyStateFetcher implements Closeable {

    private final Path directory;
    private final Map<PhysicalStateHandleID, LocalStateFile> fetched = new HashMap<>();
    private long checkpointId = -1;
    private Map<PhysicalStateHandleID, LocalStateFile> copies = Map.of();
    private long bytesFetched;

    public StandbyStateFetcher(Path directory) throws IOException {
        this.directory = Files.createDirectories(directory);
    }

    /**
     * Fetches checkpoint {@code checkpointId}'s files of the subtask and returns the local copies
     * of all of them. An older checkpoint than the one held is ignored.
     */
    public synchronized Map<PhysicalStateHandleID, LocalStateFile> fetch(long checkpointId, TaskStateSnapshot remote) throws IOException {
        if (checkpointId < this.checkpointId) {
            return copies;
        }
        Set<PhysicalStateHandleID> referenced = new HashSet<>();
        Map<PhysicalStateHandleID, LocalStateFile> added = new HashMap<>();
        try {
            for (StreamStateHandle file : StateFiles.of(remote)) {
                PhysicalStateHandleID id = file.getStreamStateHandleID();
                referenced.add(id);
                if (!fetched.containsKey(id) && !added.containsKey(id)) {
                    added.put(id, copy(file));
                }
            }
        } catch (IOException | RuntimeException e) {
            for (LocalStateFile file : added.values()) {
                Files.deleteIfExists(Path.of(file.path()));
            }
            throw e;
        }
        fetched.putAll(added);
        this.checkpointId = checkpointId;
        Map<PhysicalStateHandleID, LocalStateFile> latest = new HashMap<>();
        for (PhysicalStateHandleID id : referenced) {
            latest.put(id, fetched.get(id));
        }
        this.copies = Map.copyOf(latest);
        return copies;
    }

    /**
     * Deletes the copies the latest checkpoint no longer refers to. Separate from {@link #fetch}:
     * the JobManager may be restoring a replacement from the previous checkpoint's copies until
     * it learnt of the new ones.
     */
    public synchronized void dropUnreferenced() throws IOException {
        for (PhysicalStateHandleID id : new HashSet<>(fetched.keySet())) {
            if (!copies.containsKey(id)) {
                Files.deleteIfExists(Path.of(fetched.remove(id).path()));
            }
        }
    }

    /** The checkpoint whose state is held, -1 before the first fetch. */
    public synchronized long checkpointId() {
        return checkpointId;
    }

    /** Bytes copied from checkpoint storage so far (files already held are not copied again). */
    public synchronized long bytesFetched() {
        return bytesFetched;
    }

    private LocalStateFile copy(StreamStateHandle file) throws IOException {
        Path target = directory.resolve(UUID.randomUUID().toString());
        Path partial = directory.resolve(target.getFileName() + ".partial");
        long size;
        try (FSDataInputStream in = file.openInputStream(); OutputStream out = Files.newOutputStream(partial)) {
            size = in.transferTo(out);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(partial);
            throw e;
        }
        Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
        bytesFetched += size;
        return new LocalStateFile(target.toString(), file.getStreamStateHandleID(), size);
    }

    /**
     * Stops keeping the copies without deleting them: a cancelled standby's replacement may still
     * restore from them. The standby that comes after it deletes them ({@link #deleteOthers}).
     */
    public synchronized void abandon() {
        fetched.clear();
        copies = Map.of();
        checkpointId = -1;
    }

    /**
     * Deletes the other directories next to this fetcher's: copies that earlier standbys of the
     * same subtask abandoned. Call once this fetcher holds a checkpoint taken after they ended.
     */
    public static void deleteOthers(Path directory, String prefix) throws IOException {
        Path parent = directory.getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            return;
        }
        try (var siblings = Files.list(parent)) {
            for (Path sibling : (Iterable<Path>) siblings::iterator) {
                if (!sibling.equals(directory) && sibling.getFileName().toString().startsWith(prefix)) {
                    try (var files = Files.walk(sibling)) {
                        for (Path file : (Iterable<Path>) files.sorted(java.util.Comparator.reverseOrder())::iterator) {
                            Files.deleteIfExists(file);
                        }
                    }
                }
            }
        }
    }

    @Override
    public synchronized void close() throws IOException {
        for (LocalStateFile file : fetched.values()) {
            Files.deleteIfExists(Path.of(file.path()));
        }
        fetched.clear();
        copies = Map.of();
        checkpointId = -1;
    }
}
