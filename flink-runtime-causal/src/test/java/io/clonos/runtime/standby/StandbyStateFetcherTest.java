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
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StandbyStateFetcherTest {

    private static final OperatorID OPERATOR = new OperatorID();
    private static final UUID BACKEND = UUID.randomUUID();

    @TempDir Path storage;
    @TempDir Path standby;

    @Test
    void theFetchedStateReadsTheSameBytesFromLocalCopiesWithTheRemoteIds() throws Exception {
        StreamStateHandle keyGroups = file("key-groups", "keyed state");
        StreamStateHandle operatorState = file("operator", "operator state");
        ByteStreamStateHandle inline = new ByteStreamStateHandle("inline", "small".getBytes(StandardCharsets.UTF_8));
        TaskStateSnapshot remote = snapshot(OperatorSubtaskState.builder()
                .setManagedKeyedState(new KeyGroupsStateHandle(offsets(), keyGroups))
                .setRawKeyedState(new KeyGroupsStateHandle(offsets(), inline))
                .setManagedOperatorState(new OperatorStreamStateHandle(Map.of(), operatorState))
                .build());

        try (StandbyStateFetcher fetcher = new StandbyStateFetcher(standby)) {
            TaskStateSnapshot local = StateFiles.localize(remote, fetcher.fetch(1, remote));

            OperatorSubtaskState state = local.getSubtaskStateByOperatorID(OPERATOR);
            StreamStateHandle localKeyGroups = ((KeyGroupsStateHandle) state.getManagedKeyedState().iterator().next()).getDelegateStateHandle();
            assertLocalCopyOf(localKeyGroups, keyGroups);
            assertLocalCopyOf(((OperatorStreamStateHandle) state.getManagedOperatorState().iterator().next()).getDelegateStateHandle(), operatorState);
            assertThat(((KeyGroupsStateHandle) state.getRawKeyedState().iterator().next()).getDelegateStateHandle())
                    .as("state inlined in the checkpoint stays").isSameAs(inline);
            assertThat(((KeyGroupsStateHandle) state.getManagedKeyedState().iterator().next()).getGroupRangeOffsets()).isEqualTo(offsets());
            assertThat(fetcher.checkpointId()).isEqualTo(1);
        }
    }

    @Test
    void incrementalCheckpointsFetchOnlyNewFilesAndDropUnreferencedOnes() throws Exception {
        StreamStateHandle sst1 = file("1.sst", "first sst");
        StreamStateHandle sst2 = file("2.sst", "second sst");
        StreamStateHandle sst3 = file("3.sst", "third sst!");
        try (StandbyStateFetcher fetcher = new StandbyStateFetcher(standby)) {
            TaskStateSnapshot first = fetchLocalized(fetcher, 1, snapshot(incremental(1, List.of(sst1, sst2), file("MANIFEST-1", "m1"), file("meta-1", "meta one"))));
            long afterFirst = fetcher.bytesFetched();
            String sst2Copy = sharedCopy(first, "2.sst").path();
            String sst1Copy = sharedCopy(first, "1.sst").path();

            StreamStateHandle manifest2 = file("MANIFEST-2", "m2");
            StreamStateHandle meta2 = file("meta-2", "meta two");
            TaskStateSnapshot second = fetchLocalized(fetcher, 2, snapshot(incremental(2, List.of(sst2, sst3), manifest2, meta2)));
            assertThat(Path.of(sst1Copy)).as("kept until the JobManager knows the new copies").exists();
            fetcher.dropUnreferenced();

            assertThat(fetcher.bytesFetched() - afterFirst)
                    .as("only the files the first checkpoint did not have")
                    .isEqualTo(sst3.getStateSize() + manifest2.getStateSize() + meta2.getStateSize());
            assertThat(sharedCopy(second, "2.sst").path()).as("a shared file is kept, not fetched again").isEqualTo(sst2Copy);
            assertThat(Path.of(sst1Copy)).as("a file no checkpoint refers to any more").doesNotExist();
            assertLocalCopyOf(sharedCopy(second, "3.sst"), sst3);
            IncrementalRemoteKeyedStateHandle handle = (IncrementalRemoteKeyedStateHandle) second.getSubtaskStateByOperatorID(OPERATOR).getManagedKeyedState().iterator().next();
            assertThat(handle.getCheckpointId()).isEqualTo(2);
            assertThat(handle.getBackendIdentifier()).isEqualTo(BACKEND);
            assertLocalCopyOf(handle.getMetaDataStateHandle(), meta2);
            assertLocalCopyOf(handle.getPrivateState().get(0).getHandle(), manifest2);
        }
    }

    @Test
    void aFailedFetchKeepsThePreviousCheckpointsCopy() throws Exception {
        StreamStateHandle sst1 = file("1.sst", "first sst");
        try (StandbyStateFetcher fetcher = new StandbyStateFetcher(standby)) {
            TaskStateSnapshot first = fetchLocalized(fetcher, 1, snapshot(incremental(1, List.of(sst1), file("MANIFEST-1", "m1"), file("meta-1", "meta one"))));

            StreamStateHandle broken = new Unreadable();
            assertThatThrownBy(() -> fetcher.fetch(2, snapshot(incremental(2, List.of(sst1, file("2.sst", "second")), broken, file("meta-2", "meta two")))))
                    .isInstanceOf(IOException.class);

            assertThat(fetcher.checkpointId()).isEqualTo(1);
            assertThat(Path.of(sharedCopy(first, "1.sst").path())).exists();
            try (var files = Files.list(standby)) {
                assertThat(files.count()).as("the first checkpoint's three files and nothing of the failed fetch").isEqualTo(3);
            }
        }
    }

    @Test
    void anOlderCheckpointIsIgnored() throws Exception {
        try (StandbyStateFetcher fetcher = new StandbyStateFetcher(standby)) {
            Map<PhysicalStateHandleID, LocalStateFile> second = fetcher.fetch(2, snapshot(incremental(2, List.of(file("2.sst", "two")), file("MANIFEST-2", "m2"), file("meta-2", "meta"))));
            long fetched = fetcher.bytesFetched();

            assertThat(fetcher.fetch(1, snapshot(incremental(1, List.of(file("1.sst", "one")), file("MANIFEST-1", "m1"), file("meta-1", "meta"))))).isEqualTo(second);
            assertThat(fetcher.checkpointId()).isEqualTo(2);
            assertThat(fetcher.bytesFetched()).isEqualTo(fetched);
        }
    }

    // ------------------------------------------------------------------------------------------

    private static TaskStateSnapshot fetchLocalized(StandbyStateFetcher fetcher, long checkpoint, TaskStateSnapshot remote) throws IOException {
        return StateFiles.localize(remote, fetcher.fetch(checkpoint, remote));
    }

    private StreamStateHandle file(String name, String content) throws IOException {
        Path file = Files.writeString(storage.resolve(name), content);
        return new FileStateHandle(new org.apache.flink.core.fs.Path(file.toUri()), Files.size(file));
    }

    private static KeyGroupRangeOffsets offsets() {
        return new KeyGroupRangeOffsets(KeyGroupRange.of(0, 1), new long[] {0, 4});
    }

    private static KeyedStateHandle incremental(long checkpoint, List<StreamStateHandle> ssts, StreamStateHandle manifest, StreamStateHandle meta) {
        List<HandleAndLocalPath> shared = ssts.stream().map(sst -> HandleAndLocalPath.of(sst, name(sst))).toList();
        return new IncrementalRemoteKeyedStateHandle(BACKEND, KeyGroupRange.of(0, 1), checkpoint, shared, List.of(HandleAndLocalPath.of(manifest, "MANIFEST")), meta);
    }

    private static String name(StreamStateHandle handle) {
        return ((FileStateHandle) handle).getFilePath().getName();
    }

    private static TaskStateSnapshot snapshot(KeyedStateHandle keyed) {
        return snapshot(OperatorSubtaskState.builder().setManagedKeyedState(keyed).build());
    }

    private static TaskStateSnapshot snapshot(OperatorSubtaskState state) {
        TaskStateSnapshot snapshot = new TaskStateSnapshot();
        snapshot.putSubtaskStateByOperatorID(OPERATOR, state);
        return snapshot;
    }

    private static LocalStateFile sharedCopy(TaskStateSnapshot snapshot, String localPath) {
        IncrementalRemoteKeyedStateHandle handle = (IncrementalRemoteKeyedStateHandle) snapshot.getSubtaskStateByOperatorID(OPERATOR).getManagedKeyedState().iterator().next();
        return (LocalStateFile) handle.getSharedState().stream().filter(f -> f.getLocalPath().equals(localPath)).findFirst().orElseThrow().getHandle();
    }

    private static void assertLocalCopyOf(StreamStateHandle local, StreamStateHandle remote) throws IOException {
        assertThat(local).isInstanceOf(LocalStateFile.class);
        assertThat(local.getStreamStateHandleID()).as("the remote file's id").isEqualTo(remote.getStreamStateHandleID());
        assertThat(local.getStateSize()).isEqualTo(remote.getStateSize());
        assertThat(((LocalStateFile) local).path()).as("a copy, not the remote file").isNotEqualTo(((FileStateHandle) remote).getFilePath().getPath());
        try (FSDataInputStream in = local.openInputStream(); FSDataInputStream original = remote.openInputStream()) {
            assertThat(in.readAllBytes()).isEqualTo(original.readAllBytes());
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
