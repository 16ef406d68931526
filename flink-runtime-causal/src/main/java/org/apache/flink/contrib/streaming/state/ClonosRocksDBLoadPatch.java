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

package org.apache.flink.contrib.streaming.state;

import org.apache.flink.annotation.Internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * <b>Patch.</b> Loads RocksDB's native library in a standby's TaskManager before the standby's
 * activation needs it. Flink loads it when a process builds its first RocksDB backend; for the
 * replacement of an activated standby, usually the first on its TaskManager, that load (extracting
 * and linking the library) lies on the recovery's critical path, between the chain's other
 * operators and the opening of the standby's copy of the state. Flink's loader is package-private,
 * hence this class in Flink's package; it keeps the flag that makes a second load a no-op, so the
 * replacement finds the library loaded. A failure here changes nothing: the replacement loads the
 * library as Flink always does, and reports what goes wrong.
 */
@Internal
public final class ClonosRocksDBLoadPatch {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosRocksDBLoadPatch.class);

    private ClonosRocksDBLoadPatch() {}

    /**
     * Loads the library through Flink's loader, extracting it under {@code tmpDirectory}, unless
     * this process has it already.
     */
    public static void ensureLoaded(String tmpDirectory) {
        try {
            EmbeddedRocksDBStateBackend.ensureRocksDBIsLoaded(tmpDirectory);
        } catch (Exception | LinkageError e) {
            LOG.info(
                    "Could not load RocksDB's native library ahead of a standby's activation; its replacement loads it.",
                    e);
        }
    }
}
