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
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.StateObjectCollection;
import org.apache.flink.runtime.checkpoint.TaskStateSnapshot;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.DirectoryStateHandle;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalLocalKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupsSavepointStateHandle;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.OperatorStreamStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The files a subtask's checkpointed state consists of, and the same state with those files swapped
 * (for a standby's local copies). Keyed state in key groups (heap backends, full RocksDB
 * snapshots), incremental RocksDB state (shared and private files and the metadata) and operator
 * state are covered; other handles (channel state, changelog) stay as they are, read from
 * checkpoint storage.
 */
@Internal
public final class StateFiles {

    private StateFiles() {}

    /** The files of {@code snapshot} that are not held in memory, each once. */
    public static List<StreamStateHandle> of(TaskStateSnapshot snapshot) {
        List<StreamStateHandle> files = new ArrayList<>();
        replace(
                snapshot,
                file -> {
                    if (file.asBytesIfInMemory().isEmpty()
                            && files.stream()
                                    .noneMatch(
                                            f ->
                                                    f.getStreamStateHandleID()
                                                            .equals(
                                                                    file
                                                                            .getStreamStateHandleID()))) {
                        files.add(file);
                    }
                    return file;
                });
        return files;
    }

    /** The incremental RocksDB handles of {@code snapshot}'s keyed state. */
    public static List<IncrementalRemoteKeyedStateHandle> incrementalHandles(
            TaskStateSnapshot snapshot) {
        List<IncrementalRemoteKeyedStateHandle> handles = new ArrayList<>();
        for (Map.Entry<OperatorID, OperatorSubtaskState> operator :
                snapshot.getSubtaskStateMappings()) {
            for (KeyedStateHandle handle : operator.getValue().getManagedKeyedState()) {
                if (handle instanceof IncrementalRemoteKeyedStateHandle incremental) {
                    handles.add(incremental);
                }
            }
        }
        return handles;
    }

    /**
     * {@code snapshot} reading its state from the local copies where there are some: an incremental
     * RocksDB handle with a directory among {@code copies} becomes a local handle of that directory
     * (restored by hard links, as in task-local recovery), every other file with a copy reads the
     * copy; files without one, and state inlined in the checkpoint, stay as they are.
     */
    public static TaskStateSnapshot localize(TaskStateSnapshot snapshot, LocalCopies copies) {
        UnaryOperator<StreamStateHandle> swap =
                file -> {
                    LocalStateFile copy =
                            file.asBytesIfInMemory().isPresent()
                                    ? null
                                    : copies.files().get(file.getStreamStateHandleID());
                    return copy != null ? copy : file;
                };
        TaskStateSnapshot localized = replace(snapshot, swap);
        for (Map.Entry<OperatorID, OperatorSubtaskState> operator :
                snapshot.getSubtaskStateMappings()) {
            List<KeyedStateHandle> managed = new ArrayList<>();
            for (KeyedStateHandle handle : operator.getValue().getManagedKeyedState()) {
                String database = copies.databases().get(handle.getStateHandleId());
                managed.add(
                        database != null
                                        && handle
                                                instanceof
                                                IncrementalRemoteKeyedStateHandle incremental
                                ? restoredFrom(incremental, Path.of(database), swap)
                                : keyed(handle, swap));
            }
            OperatorSubtaskState swapped = localized.getSubtaskStateByOperatorID(operator.getKey());
            localized.putSubtaskStateByOperatorID(
                    operator.getKey(),
                    swapped.toBuilder()
                            .setManagedKeyedState(new StateObjectCollection<>(managed))
                            .build());
        }
        return localized;
    }

    /**
     * The local handle of {@code handle}'s directory. It lists the shared files of the checkpoint,
     * not their copies: the backend refers to them (by id, and by kind: merged files differ) in its
     * next incremental checkpoint, and the JobManager's shared state registry knows the
     * checkpoint's.
     */
    private static IncrementalLocalKeyedStateHandle restoredFrom(
            IncrementalRemoteKeyedStateHandle handle,
            Path database,
            UnaryOperator<StreamStateHandle> swap) {
        return new IncrementalLocalKeyedStateHandle(
                handle.getBackendIdentifier(),
                handle.getCheckpointId(),
                new DirectoryStateHandle(database, handle.getStateSize()),
                handle.getKeyGroupRange(),
                swap.apply(handle.getMetaDataStateHandle()),
                handle.getSharedState());
    }

    /** {@code snapshot} with every file replaced by what {@code swap} gives for it. */
    public static TaskStateSnapshot replace(
            TaskStateSnapshot snapshot, UnaryOperator<StreamStateHandle> swap) {
        TaskStateSnapshot replaced =
                new TaskStateSnapshot(
                        snapshot.getSubtaskStateMappings().size(), snapshot.isTaskFinished());
        for (Map.Entry<OperatorID, OperatorSubtaskState> operator :
                snapshot.getSubtaskStateMappings()) {
            OperatorSubtaskState state = operator.getValue();
            replaced.putSubtaskStateByOperatorID(
                    operator.getKey(),
                    state.toBuilder()
                            .setManagedKeyedState(keyed(state.getManagedKeyedState(), swap))
                            .setRawKeyedState(keyed(state.getRawKeyedState(), swap))
                            .setManagedOperatorState(
                                    operators(state.getManagedOperatorState(), swap))
                            .setRawOperatorState(operators(state.getRawOperatorState(), swap))
                            .build());
        }
        return replaced;
    }

    private static StateObjectCollection<KeyedStateHandle> keyed(
            StateObjectCollection<KeyedStateHandle> handles,
            UnaryOperator<StreamStateHandle> swap) {
        List<KeyedStateHandle> replaced = new ArrayList<>(handles.size());
        for (KeyedStateHandle handle : handles) {
            replaced.add(keyed(handle, swap));
        }
        return new StateObjectCollection<>(replaced);
    }

    private static KeyedStateHandle keyed(
            KeyedStateHandle handle, UnaryOperator<StreamStateHandle> swap) {
        if (handle instanceof KeyGroupsSavepointStateHandle savepoint) {
            return new KeyGroupsSavepointStateHandle(
                    savepoint.getGroupRangeOffsets(),
                    swap.apply(savepoint.getDelegateStateHandle()));
        }
        if (handle instanceof KeyGroupsStateHandle groups) {
            return KeyGroupsStateHandle.restore(
                    groups.getGroupRangeOffsets(),
                    swap.apply(groups.getDelegateStateHandle()),
                    groups.getStateHandleId());
        }
        if (handle instanceof IncrementalRemoteKeyedStateHandle incremental) {
            return IncrementalRemoteKeyedStateHandle.restore(
                    incremental.getBackendIdentifier(),
                    incremental.getKeyGroupRange(),
                    incremental.getCheckpointId(),
                    files(incremental.getSharedState(), swap),
                    files(incremental.getPrivateState(), swap),
                    swap.apply(incremental.getMetaDataStateHandle()),
                    incremental.getCheckpointedSize(),
                    incremental.getStateHandleId());
        }
        return handle;
    }

    private static List<HandleAndLocalPath> files(
            List<HandleAndLocalPath> files, UnaryOperator<StreamStateHandle> swap) {
        List<HandleAndLocalPath> replaced = new ArrayList<>(files.size());
        for (HandleAndLocalPath file : files) {
            replaced.add(HandleAndLocalPath.of(swap.apply(file.getHandle()), file.getLocalPath()));
        }
        return replaced;
    }

    private static StateObjectCollection<OperatorStateHandle> operators(
            StateObjectCollection<OperatorStateHandle> handles,
            UnaryOperator<StreamStateHandle> swap) {
        List<OperatorStateHandle> replaced = new ArrayList<>(handles.size());
        for (OperatorStateHandle handle : handles) {
            replaced.add(
                    handle instanceof OperatorStreamStateHandle stream
                            ? new OperatorStreamStateHandle(
                                    stream.getStateNameToPartitionOffsets(),
                                    swap.apply(stream.getDelegateStateHandle()))
                            : handle);
        }
        return new StateObjectCollection<>(replaced);
    }
}
