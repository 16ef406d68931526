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

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.TaskStateSnapshot;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalLocalKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeOffsets;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.OperatorStreamStateHandle;
import org.apache.flink.runtime.state.PhysicalStateHandleID;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The standby's fetcher against checkpoint storage that must be copied from (a stream handle that
 * is not a local file, as on HDFS) and against a local checkpoint directory on the same volume
 * (hard links).
 */
class StandbyStateFetcherTest {

    private static final OperatorID OPERATOR = new OperatorID();
    private static final UUID BACKEND = UUID.randomUUID();

    @TempDir Path storage;
    @TempDir Path standby;

    @Test
    void theFetchedStateReadsTheSameBytesFromLocalCopiesWithTheRemoteIds() throws Exception {
        StreamStateHandle keyGroups = remote("key-groups", "keyed state");
        StreamStateHandle operatorState = remote("operator", "operator state");
        ByteStreamStateHandle inline =
                new ByteStreamStateHandle("inline", "small".getBytes(StandardCharsets.UTF_8));
        TaskStateSnapshot remote =
                snapshot(
                        OperatorSubtaskState.builder()
                                .setManagedKeyedState(
                                        new KeyGroupsStateHandle(offsets(), keyGroups))
                                .setRawKeyedState(new KeyGroupsStateHandle(offsets(), inline))
                                .setManagedOperatorState(
                                        new OperatorStreamStateHandle(
                                                java.util.Map.of(), operatorState))
                                .build());

        try (StandbyStateFetcher fetcher = new StandbyStateFetcher(standby)) {
            TaskStateSnapshot local = StateFiles.localize(remote, fetcher.fetch(1, remote));

            OperatorSubtaskState state = local.getSubtaskStateByOperatorID(OPERATOR);
            StreamStateHandle localKeyGroups =
                    ((KeyGroupsStateHandle) state.getManagedKeyedState().iterator().next())
                            .getDelegateStateHandle();
            assertLocalCopyOf(localKeyGroups, keyGroups);
            assertLocalCopyOf(
                    ((OperatorStreamStateHandle) state.getManagedOperatorState().iterator().next())
                            .getDelegateStateHandle(),
                    operatorState);
            assertThat(
                            ((KeyGroupsStateHandle) state.getRawKeyedState().iterator().next())
                                    .getDelegateStateHandle())
                    .as("state inlined in the checkpoint stays")
                    .isSameAs(inline);
            assertThat(
                            ((KeyGroupsStateHandle) state.getManagedKeyedState().iterator().next())
                                    .getGroupRangeOffsets())
                    .isEqualTo(offsets());
            assertThat(fetcher.checkpointId()).isEqualTo(1);
            assertThat(fetcher.bytesFetched())
                    .isEqualTo(keyGroups.getStateSize() + operatorState.getStateSize());
        }
    }

    @Test
    void incrementalCheckpointsFetchOnlyNewFilesAndDropUnreferencedOnes() throws Exception {
        StreamStateHandle sst1 = remote("1.sst", "first sst");
        StreamStateHandle sst2 = remote("2.sst", "second sst");
        StreamStateHandle sst3 = remote("3.sst", "third sst!");
        try (StandbyStateFetcher fetcher = new StandbyStateFetcher(standby)) {
            LocalCopies first =
                    fetcher.fetch(
                            1,
                            snapshot(
                                    incremental(
                                            1,
                                            List.of(sst1, sst2),
                                            remote("MANIFEST-1", "m1"),
                                            remote("meta-1", "meta one"))));
            long afterFirst = fetcher.bytesFetched();
            String sst1Copy = first.files().get(sst1.getStreamStateHandleID()).path();
            String firstDatabase = first.databases().values().iterator().next();

            StreamStateHandle manifest2 = remote("MANIFEST-2", "m2");
            StreamStateHandle meta2 = remote("meta-2", "meta two");
            LocalCopies second =
                    fetcher.fetch(
                            2, snapshot(incremental(2, List.of(sst2, sst3), manifest2, meta2)));
            assertThat(Path.of(sst1Copy))
                    .as("kept until the JobManager knows the new copies")
                    .exists();
            assertThat(Path.of(firstDatabase)).exists();
            fetcher.dropUnreferenced();

            assertThat(fetcher.bytesFetched() - afterFirst)
                    .as("only the files the first checkpoint did not have")
                    .isEqualTo(
                            sst3.getStateSize() + manifest2.getStateSize() + meta2.getStateSize());
            assertThat(second.files().get(sst2.getStreamStateHandleID()).path())
                    .as("a shared file is kept, not fetched again")
                    .isEqualTo(first.files().get(sst2.getStreamStateHandleID()).path());
            assertThat(Path.of(sst1Copy))
                    .as("a file no checkpoint refers to any more")
                    .doesNotExist();
            assertThat(Path.of(firstDatabase))
                    .as("the directory of a handle no checkpoint refers to any more")
                    .doesNotExist();
            assertLocalCopyOf(second.files().get(sst3.getStreamStateHandleID()), sst3);
        }
    }

    @Test
    void anIncrementalHandleIsRestoredFromADirectoryLaidOutLikeItsRocksDbInstance()
            throws Exception {
        StreamStateHandle sst = remote("7.sst", "an sst");
        StreamStateHandle meta = remote("meta", "meta data");
        ByteStreamStateHandle options =
                new ByteStreamStateHandle(
                        "options", "inlined options".getBytes(StandardCharsets.UTF_8));
        IncrementalRemoteKeyedStateHandle handle =
                new IncrementalRemoteKeyedStateHandle(
                        BACKEND,
                        KeyGroupRange.of(0, 1),
                        4,
                        List.of(HandleAndLocalPath.of(sst, "000007.sst")),
                        List.of(
                                HandleAndLocalPath.of(
                                        remote("manifest", "manifest"), "MANIFEST-000003"),
                                HandleAndLocalPath.of(options, "OPTIONS-000005")),
                        meta);
        TaskStateSnapshot remote = snapshot(handle);
        try (StandbyStateFetcher fetcher = new StandbyStateFetcher(standby)) {
            KeyedStateHandle restored =
                    StateFiles.localize(remote, fetcher.fetch(4, remote))
                            .getSubtaskStateByOperatorID(OPERATOR)
                            .getManagedKeyedState()
                            .iterator()
                            .next();

            assertThat(restored).isInstanceOf(IncrementalLocalKeyedStateHandle.class);
            IncrementalLocalKeyedStateHandle local = (IncrementalLocalKeyedStateHandle) restored;
            Path directory = local.getDirectoryStateHandle().getDirectory();
            assertThat(directory).startsWith(standby);
            assertThat(Files.readString(directory.resolve("000007.sst"))).isEqualTo("an sst");
            assertThat(Files.readString(directory.resolve("MANIFEST-000003")))
                    .isEqualTo("manifest");
            assertThat(Files.readString(directory.resolve("OPTIONS-000005")))
                    .as("a file inlined in the checkpoint is written out")
                    .isEqualTo("inlined options");
            assertLocalCopyOf(local.getMetaDataStateHandle(), meta);
            assertThat(local.getSharedStateHandles())
                    .as(
                            "the checkpoint's shared files, which the next incremental checkpoint refers to by id")
                    .isEqualTo(handle.getSharedState());
            assertThat(local.getCheckpointId()).isEqualTo(4);
            assertThat(local.getBackendIdentifier()).isEqualTo(BACKEND);
            assertThat(local.getKeyGroupRange()).isEqualTo(handle.getKeyGroupRange());
        }
    }

    @Test
    void filesOfALocalCheckpointDirectoryOnTheSameVolumeAreLinkedNotCopied() throws Exception {
        Path original = Files.writeString(storage.resolve("1.sst"), "linked sst");
        StreamStateHandle sst =
                new FileStateHandle(
                        new org.apache.flink.core.fs.Path(original.toUri()), Files.size(original));
        try (StandbyStateFetcher fetcher = new StandbyStateFetcher(standby)) {
            LocalCopies copies =
                    fetcher.fetch(
                            1,
                            snapshot(
                                    incremental(
                                            1,
                                            List.of(sst),
                                            remote("MANIFEST-1", "m1"),
                                            remote("meta-1", "meta one"))));
            Path copy = Path.of(copies.files().get(sst.getStreamStateHandleID()).path());

            assertThat(copy).isNotEqualTo(original);
            assertThat(Files.isSameFile(copy, original)).as("a hard link").isTrue();
            assertThat(fetcher.bytesFetched())
                    .as("the linked file is not copied")
                    .isEqualTo("m1".length() + "meta one".length());
            Files.delete(original);
            assertThat(Files.readString(copy))
                    .as("kept after Flink deleted the checkpoint's file")
                    .isEqualTo("linked sst");
        }
    }

    @Test
    void aFailedFetchKeepsThePreviousCheckpointsCopy() throws Exception {
        StreamStateHandle sst1 = remote("1.sst", "first sst");
        try (StandbyStateFetcher fetcher = new StandbyStateFetcher(standby)) {
            LocalCopies first = fetchFirst(fetcher, sst1);

            StreamStateHandle broken = new Unreadable();
            assertThatThrownBy(
                            () ->
                                    fetcher.fetch(
                                            2,
                                            snapshot(
                                                    incremental(
                                                            2,
                                                            List.of(
                                                                    sst1,
                                                                    remote("2.sst", "second")),
                                                            broken,
                                                            remote("meta-2", "meta two")))))
                    .isInstanceOf(IOException.class);

            assertThat(fetcher.checkpointId()).isEqualTo(1);
            assertThat(Path.of(first.files().get(sst1.getStreamStateHandleID()).path())).exists();
            try (var files = Files.list(standby)) {
                assertThat(files.count())
                        .as(
                                "the first checkpoint's three files and its directory, nothing of the failed fetch")
                        .isEqualTo(4);
            }
        }
    }

    /**
     * A checkpoint subsumed while it is fetched loses files on checkpoint storage: the fetch says
     * so, the previous checkpoint's copy stays, and the files copied whole are kept for the next
     * checkpoint, which fetches only what they do not cover.
     */
    @Test
    void aCheckpointGoneWhileFetchedKeepsItsWholeCopiesForTheNext() throws Exception {
        StreamStateHandle sst1 = remote("1.sst", "first sst");
        try (StandbyStateFetcher fetcher = new StandbyStateFetcher(standby)) {
            fetchFirst(fetcher, sst1);
            StreamStateHandle sst2 = remote("2.sst", "second sst");
            StreamStateHandle deleted = remote("MANIFEST-2", "m2");
            Files.delete(storage.resolve("MANIFEST-2"));
            long beforeSecond = fetcher.bytesFetched();
            assertThatThrownBy(
                            () ->
                                    fetcher.fetch(
                                            2,
                                            snapshot(
                                                    incremental(
                                                            2,
                                                            List.of(sst1, sst2),
                                                            deleted,
                                                            remote("meta-2", "meta two")))))
                    .isInstanceOf(StandbyStateFetcher.CheckpointGoneException.class)
                    .hasMessageContaining("MANIFEST-2");
            assertThat(fetcher.checkpointId()).isEqualTo(1);
            long copiedOfSecond = fetcher.bytesFetched() - beforeSecond;
            assertThat(copiedOfSecond).as("2.sst was copied before the gap").isPositive();

            StreamStateHandle manifest3 = remote("MANIFEST-3", "m3");
            StreamStateHandle meta3 = remote("meta-3", "meta three");
            LocalCopies third =
                    fetcher.fetch(
                            3, snapshot(incremental(3, List.of(sst1, sst2), manifest3, meta3)));
            assertThat(fetcher.bytesFetched() - beforeSecond - copiedOfSecond)
                    .as("the third checkpoint fetches only what the gone one's copies lack")
                    .isEqualTo(manifest3.getStateSize() + meta3.getStateSize());
            assertLocalCopyOf(third.files().get(sst2.getStreamStateHandleID()), sst2);
        }
    }

    @Test
    void anOlderCheckpointIsIgnored() throws Exception {
        try (StandbyStateFetcher fetcher = new StandbyStateFetcher(standby)) {
            LocalCopies second =
                    fetcher.fetch(
                            2,
                            snapshot(
                                    incremental(
                                            2,
                                            List.of(remote("2.sst", "two")),
                                            remote("MANIFEST-2", "m2"),
                                            remote("meta-2", "meta"))));
            long fetched = fetcher.bytesFetched();

            assertThat(
                            fetcher.fetch(
                                    1,
                                    snapshot(
                                            incremental(
                                                    1,
                                                    List.of(remote("1.sst", "one")),
                                                    remote("MANIFEST-1", "m1"),
                                                    remote("meta-1", "meta")))))
                    .isEqualTo(second);
            assertThat(fetcher.checkpointId()).isEqualTo(2);
            assertThat(fetcher.bytesFetched()).isEqualTo(fetched);
        }
    }

    // ------------------------------------------------------------------------------------------

    /** Fetches checkpoint 1: an incremental handle of {@code sst}, a manifest and its metadata. */
    private LocalCopies fetchFirst(StandbyStateFetcher fetcher, StreamStateHandle sst)
            throws IOException {
        return fetcher.fetch(
                1,
                snapshot(
                        incremental(
                                1,
                                List.of(sst),
                                remote("MANIFEST-1", "m1"),
                                remote("meta-1", "meta one"))));
    }

    /** A file on checkpoint storage the standby has to copy (not a local file it could link). */
    private StreamStateHandle remote(String name, String content) throws IOException {
        Path file = Files.writeString(storage.resolve(name), content);
        return new RemoteFile(file);
    }

    private static KeyGroupRangeOffsets offsets() {
        return new KeyGroupRangeOffsets(KeyGroupRange.of(0, 1), new long[] {0, 4});
    }

    private static KeyedStateHandle incremental(
            long checkpoint,
            List<StreamStateHandle> ssts,
            StreamStateHandle manifest,
            StreamStateHandle meta) {
        List<HandleAndLocalPath> shared =
                ssts.stream().map(sst -> HandleAndLocalPath.of(sst, name(sst))).toList();
        return new IncrementalRemoteKeyedStateHandle(
                BACKEND,
                KeyGroupRange.of(0, 1),
                checkpoint,
                shared,
                List.of(HandleAndLocalPath.of(manifest, "MANIFEST")),
                meta);
    }

    private static String name(StreamStateHandle file) {
        return file instanceof FileStateHandle local
                ? local.getFilePath().getName()
                : ((RemoteFile) file).file.getFileName().toString();
    }

    private static TaskStateSnapshot snapshot(KeyedStateHandle keyed) {
        return snapshot(OperatorSubtaskState.builder().setManagedKeyedState(keyed).build());
    }

    private static TaskStateSnapshot snapshot(OperatorSubtaskState state) {
        TaskStateSnapshot snapshot = new TaskStateSnapshot();
        snapshot.putSubtaskStateByOperatorID(OPERATOR, state);
        return snapshot;
    }

    private static void assertLocalCopyOf(StreamStateHandle local, StreamStateHandle remote)
            throws IOException {
        assertThat(local).isInstanceOf(LocalStateFile.class);
        assertThat(local.getStreamStateHandleID())
                .as("the remote file's id")
                .isEqualTo(remote.getStreamStateHandleID());
        assertThat(local.getStateSize()).isEqualTo(remote.getStateSize());
        assertThat(Path.of(((LocalStateFile) local).path()))
                .as("a copy, not the remote file")
                .isNotEqualTo(((RemoteFile) remote).file);
        try (FSDataInputStream in = local.openInputStream();
                FSDataInputStream original = remote.openInputStream()) {
            assertThat(in.readAllBytes()).isEqualTo(original.readAllBytes());
        }
    }

    /** A file on checkpoint storage that is read as a stream, as from a distributed file system. */
    private static final class RemoteFile implements StreamStateHandle {
        private final Path file;

        /** Known when the checkpoint was taken, as a real handle's, even once the file is gone. */
        private final long size;

        RemoteFile(Path file) throws IOException {
            this.file = file;
            this.size = Files.size(file);
        }

        @Override
        public FSDataInputStream openInputStream() throws IOException {
            return new org.apache.flink.core.fs.local.LocalDataInputStream(file.toFile());
        }

        @Override
        public Optional<byte[]> asBytesIfInMemory() {
            return Optional.empty();
        }

        @Override
        public PhysicalStateHandleID getStreamStateHandleID() {
            return new PhysicalStateHandleID(file.getFileName().toString());
        }

        @Override
        public void discardState() {}

        @Override
        public long getStateSize() {
            return size;
        }
    }

    /** A file on checkpoint storage that cannot be read. */
    private static final class Unreadable implements StreamStateHandle {
        @Override
        public FSDataInputStream openInputStream() throws IOException {
            throw new IOException("checkpoint storage unavailable");
        }

        @Override
        public Optional<byte[]> asBytesIfInMemory() {
            return Optional.empty();
        }

        @Override
        public PhysicalStateHandleID getStreamStateHandleID() {
            return new PhysicalStateHandleID("unreadable");
        }

        @Override
        public void discardState() {}

        @Override
        public long getStateSize() {
            return 1;
        }
    }
}
