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
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.stream.Stream;

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

    /**
     * Whether every copy lies in a standby attempt's own directory, {@code
     * .../clonos-standby/<job>/<directoryName>/...}, by a path without {@code ..}: a replacement
     * restores from these paths.
     */
    public boolean liesIn(String job, String directoryName) {
        return Stream.concat(
                        files.values().stream().map(LocalStateFile::path),
                        databases.values().stream())
                .allMatch(path -> liesIn(Paths.get(path), job, directoryName));
    }

    private static boolean liesIn(Path path, String job, String directoryName) {
        if (!path.isAbsolute() || !path.normalize().equals(path)) {
            return false;
        }
        for (int i = 0; i + 3 < path.getNameCount(); i++) {
            if (path.getName(i).toString().equals(StandbyTask.DIRECTORY)
                    && path.getName(i + 1).toString().equals(job)
                    && path.getName(i + 2).toString().equals(directoryName)) {
                return true;
            }
        }
        return false;
    }
}
