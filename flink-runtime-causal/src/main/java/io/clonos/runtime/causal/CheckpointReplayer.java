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

package io.clonos.runtime.causal;

import org.apache.flink.annotation.Internal;

/**
 * Takes a source's logged checkpoint again during a replay: enters its epoch and emits its barrier
 * at the logged place among the records. The checkpoint itself was aborted with the failure:
 * nothing is snapshotted for it.
 */
@Internal
@FunctionalInterface
public interface CheckpointReplayer {
    void replay(Determinant.SourceCheckpoint checkpoint);
}
