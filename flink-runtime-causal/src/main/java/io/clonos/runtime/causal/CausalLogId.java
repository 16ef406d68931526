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
 * Names one causal log: the main-thread log of a subtask ({@link #MAIN}) or the log of one of its
 * output subpartitions (which records the size of every buffer sent on it).
 */
@Internal
public record CausalLogId(String vertex, int subtask, int subpartition) {

    public static final int MAIN = -1;

    public CausalLogId {
        if (vertex == null || vertex.isEmpty()) {
            throw new IllegalArgumentException("vertex must be named");
        }
        if (subtask < 0 || subpartition < MAIN) {
            throw new IllegalArgumentException(
                    "bad subtask " + subtask + " or subpartition " + subpartition);
        }
    }

    public static CausalLogId main(String vertex, int subtask) {
        return new CausalLogId(vertex, subtask, MAIN);
    }
}
