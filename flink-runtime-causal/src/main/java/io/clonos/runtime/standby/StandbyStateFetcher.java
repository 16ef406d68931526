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
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.PhysicalStateHandleID;
import org.apache.flink.runtime.state.StateHandleID;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.util.FileUtils;

import java.io.Closeable;
import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * A standby's local copy of one subtask's state, refreshed after every completed checkpoint: it
 * fetches the files of the checkpoint it has not fetched yet (with incremental RocksDB checkpoints,
 * only the new SST files) and lays out, per incremental RocksDB state handle, the directory a
 * replacement restores its instance from ({@link LocalCopies}); the ones no longer referenced go
 * when the JobManager knows of the new copies ({@link #dropUnreferenced}). At the standby's
 * activation the JobManager swaps the copies into the state Flink assigns the task ({@link
 * StateFiles#localize}), which then restores from local disk.
 *
 * <p>A file on checkpoint storage that is a local file system on the same volume is hard-linked
 * rather than copied: the link costs no I/O and keeps the file after Flink deleted it from the
 * checkpoint directory. Files are immutable once a checkpoint completes, so a link is as good as a
 * copy.
 *
 * <p>A fetch that fails leaves the previous checkpoint's copy intact. Not thread-safe beyond its
 * synchronized methods: one fetch at a time.
 */
@Internal
public final class StandbyStateFetcher implements Closeable {

    private final Path directory;
    private final Map<PhysicalStateHandleID, LocalStateFile> fetched = new HashMap<>();
    private final Map<StateHandleID, String> databases = new HashMap<>();
    private long checkpointId = -1;
    private LocalCopies copies = LocalCopies.NONE;
    private long bytesFetched;

    public StandbyStateFetcher(Path directory) throws IOException {
        this.directory = Files.createDirectories(directory);
    }

    /**
     * Fetches checkpoint {@code checkpointId}'s files of the subtask and returns the local copies
     * of all of them. An older checkpoint than the one held is ignored.
     */
    public synchronized LocalCopies fetch(long checkpointId, TaskStateSnapshot remote)
            throws IOException {
        if (checkpointId < this.checkpointId) {
            return copies;
        }
        Set<PhysicalStateHandleID> referenced = new HashSet<>();
        Map<PhysicalStateHandleID, LocalStateFile> added = new HashMap<>();
        Map<StateHandleID, String> addedDatabases = new HashMap<>();
        Map<StateHandleID, String> latestDatabases = new HashMap<>();
        try {
            for (StreamStateHandle file : StateFiles.of(remote)) {
                PhysicalStateHandleID id = file.getStreamStateHandleID();
                referenced.add(id);
                if (!fetched.containsKey(id) && !added.containsKey(id)) {
                    added.put(id, copy(file));
                }
            }
            for (IncrementalRemoteKeyedStateHandle handle : StateFiles.incrementalHandles(remote)) {
                String database = databases.get(handle.getStateHandleId());
                if (database == null) {
                    database = database(handle, added).toString();
                    addedDatabases.put(handle.getStateHandleId(), database);
                }
                latestDatabases.put(handle.getStateHandleId(), database);
            }
        } catch (IOException | RuntimeException e) {
            for (String database : addedDatabases.values()) {
                FileUtils.deleteDirectory(new File(database));
            }
            if (e instanceof CheckpointGoneException) {
                // whole copies of files that the next checkpoint most likely shares: kept, and
                // dropped with the other unreferenced ones after a later fetch
                fetched.putAll(added);
            } else {
                for (LocalStateFile file : added.values()) {
                    Files.deleteIfExists(Path.of(file.path()));
                }
            }
            throw e;
        }
        fetched.putAll(added);
        databases.putAll(addedDatabases);
        this.checkpointId = checkpointId;
        Map<PhysicalStateHandleID, LocalStateFile> latest = new HashMap<>();
        for (PhysicalStateHandleID id : referenced) {
            latest.put(id, fetched.get(id));
        }
        this.copies = new LocalCopies(latest, latestDatabases);
        return copies;
    }

    /**
     * Deletes the copies the latest checkpoint no longer refers to. Separate from {@link #fetch}:
     * the JobManager may be restoring a replacement from the previous checkpoint's copies until it
     * learnt of the new ones.
     */
    public synchronized void dropUnreferenced() throws IOException {
        for (PhysicalStateHandleID id : new HashSet<>(fetched.keySet())) {
            if (!copies.files().containsKey(id)) {
                Files.deleteIfExists(Path.of(fetched.remove(id).path()));
            }
        }
        for (StateHandleID id : new HashSet<>(databases.keySet())) {
            if (!copies.databases().containsKey(id)) {
                FileUtils.deleteDirectory(new File(databases.remove(id)));
            }
        }
    }

    /** The checkpoint whose state is held, -1 before the first fetch. */
    public synchronized long checkpointId() {
        return checkpointId;
    }

    /**
     * Bytes copied from checkpoint storage so far (files already held, and files hard-linked from a
     * local checkpoint directory, are not copied).
     */
    public synchronized long bytesFetched() {
        return bytesFetched;
    }

    private LocalStateFile copy(StreamStateHandle file) throws IOException {
        Path target = directory.resolve(UUID.randomUUID().toString());
        Optional<Path> local = localFile(file);
        if (local.isPresent()) {
            try {
                Files.createLink(target, local.get());
                return new LocalStateFile(
                        target.toString(), file.getStreamStateHandleID(), Files.size(target));
            } catch (FileSystemException | UnsupportedOperationException e) {
                // another volume, or no hard links: copy it
            }
        }
        Path partial = directory.resolve(target.getFileName() + ".partial");
        long size;
        try (FSDataInputStream in = openRemote(file);
                OutputStream out = Files.newOutputStream(partial)) {
            size = in.transferTo(out);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(partial);
            throw e;
        }
        Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
        bytesFetched += size;
        return new LocalStateFile(target.toString(), file.getStreamStateHandleID(), size);
    }

    private static FSDataInputStream openRemote(StreamStateHandle file) throws IOException {
        try {
            return file.openInputStream();
        } catch (FileNotFoundException | NoSuchFileException gone) {
            throw new CheckpointGoneException(file.getStreamStateHandleID(), gone);
        }
    }

    private static Optional<Path> localFile(StreamStateHandle file) {
        if (!(file instanceof FileStateHandle handle)) {
            return Optional.empty();
        }
        URI uri = handle.getFilePath().toUri();
        if (uri.getScheme() != null && !"file".equals(uri.getScheme())) {
            return Optional.empty();
        }
        return Optional.of(Path.of(uri.getPath()));
    }

    /**
     * The directory of an incremental RocksDB handle: every file under the name RocksDB gave it,
     * linked to its copy (files inlined in the checkpoint are written out).
     */
    private Path database(
            IncrementalRemoteKeyedStateHandle handle,
            Map<PhysicalStateHandleID, LocalStateFile> added)
            throws IOException {
        Path target = directory.resolve("db-" + UUID.randomUUID());
        Path partial = directory.resolve(target.getFileName() + ".partial");
        List<HandleAndLocalPath> files = new ArrayList<>(handle.getSharedState());
        files.addAll(handle.getPrivateState());
        try {
            Files.createDirectories(partial);
            for (HandleAndLocalPath file : files) {
                Path name = partial.resolve(file.getLocalPath());
                Optional<byte[]> bytes = file.getHandle().asBytesIfInMemory();
                if (bytes.isPresent()) {
                    Files.write(name, bytes.get());
                    continue;
                }
                PhysicalStateHandleID id = file.getHandle().getStreamStateHandleID();
                LocalStateFile copy = fetched.containsKey(id) ? fetched.get(id) : added.get(id);
                Files.createLink(name, Path.of(copy.path()));
            }
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            FileUtils.deleteDirectory(partial.toFile());
            throw e;
        }
        return target;
    }

    /**
     * Stops keeping the copies without deleting them: a cancelled standby's replacement may still
     * restore from them. The standby that comes after it deletes them ({@link #deleteOthers}).
     */
    public synchronized void abandon() {
        fetched.clear();
        databases.clear();
        copies = LocalCopies.NONE;
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
                if (!sibling.equals(directory)
                        && sibling.getFileName().toString().startsWith(prefix)) {
                    FileUtils.deleteDirectory(sibling.toFile());
                }
            }
        }
    }

    @Override
    public synchronized void close() throws IOException {
        for (LocalStateFile file : fetched.values()) {
            Files.deleteIfExists(Path.of(file.path()));
        }
        for (String database : databases.values()) {
            FileUtils.deleteDirectory(new File(database));
        }
        fetched.clear();
        databases.clear();
        copies = LocalCopies.NONE;
        checkpointId = -1;
    }

    /**
     * A file of the checkpoint being fetched is gone from checkpoint storage: the checkpoint was
     * subsumed, and its files that no later checkpoint shares deleted, while the standby fetched
     * it: a first fetch of a large state can take longer than a checkpoint interval. Not a failure
     * of the standby: it fetches the latest checkpoint next, and keeps the files it copied whole,
     * as that checkpoint shares most of them; the previous checkpoint's copies stay as they were.
     */
    public static final class CheckpointGoneException extends IOException {
        private static final long serialVersionUID = 1L;

        CheckpointGoneException(PhysicalStateHandleID file, IOException cause) {
            super("The checkpoint's file " + file + " is gone from checkpoint storage", cause);
        }
    }
}
