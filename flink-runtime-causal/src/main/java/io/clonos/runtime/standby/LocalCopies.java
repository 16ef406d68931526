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
import org.apache.flink.runtime.state.PhysicalStateHandleID;
import org.apache.flink.runtime.state.StateHandleID;

import java.io.Serializable;
import java.util.Map;

/**
 * What a standby holds of one checkpoint of its primary's state: a local copy of every file, by the
 * id of the file it copies, and, per incremental RocksDB state handle, a directory laid out as the
 * RocksDB instance it was taken from (links to the copies under their original names). A
 * replacement restores such a handle from its directory the way Flink's task-local recovery does:
 * by hard-linking the SST files into its instance directory instead of copying them.
 */
@Internal
public record LocalCopies(
        Map<PhysicalStateHandleID, LocalStateFile> files, Map<StateHandleID, String> databases)
        implements Serializable {

    public static final LocalCopies NONE = new LocalCopies(Map.of(), Map.of());

    public LocalCopies {
        files = Map.copyOf(files);
        databases = Map.copyOf(databases);
    }
}
