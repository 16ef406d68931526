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
import org.apache.flink.core.fs.local.LocalDataInputStream;
import org.apache.flink.runtime.state.PhysicalStateHandleID;
import org.apache.flink.runtime.state.StreamStateHandle;

import java.io.File;
import java.io.IOException;
import java.util.Optional;

/**
 * A standby's local copy of one file of a checkpoint, standing in for the file on checkpoint
 * storage when the standby is activated: the task reads the state from local disk instead of
 * downloading it.
 *
 * <p>It keeps the remote file's {@link PhysicalStateHandleID}: an incremental backend refers to the
 * files it restored from by that id in its next checkpoint, and the JobManager's shared state
 * registry must recognise them. Discarding it does nothing; the standby's {@link
 * StandbyStateFetcher} owns its copies.
 */
@Internal
public final class LocalStateFile implements StreamStateHandle {

    private static final long serialVersionUID = 1L;

    private final String path;
    private final PhysicalStateHandleID remoteId;
    private final long size;

    public LocalStateFile(String path, PhysicalStateHandleID remoteId, long size) {
        this.path = path;
        this.remoteId = remoteId;
        this.size = size;
    }

    public String path() {
        return path;
    }

    @Override
    public FSDataInputStream openInputStream() throws IOException {
        return new LocalDataInputStream(new File(path));
    }

    @Override
    public Optional<byte[]> asBytesIfInMemory() {
        return Optional.empty();
    }

    @Override
    public PhysicalStateHandleID getStreamStateHandleID() {
        return remoteId;
    }

    @Override
    public void discardState() {
        // the standby's fetcher owns its copies
    }

    @Override
    public long getStateSize() {
        return size;
    }

    @Override
    public String toString() {
        return "LocalStateFile{" + path + " for " + remoteId + ", " + size + " bytes}";
    }
}
