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
 * A causal log delta as tasks share it: with its distance, in counted hops downstream, from the
 * task whose log it is ({@link DeterminantSharing}; 0 when every hop was inside one TaskManager and
 * such hops are free). A task forwards what it holds only while the distance stays within the
 * determinant sharing depth.
 */
@Internal
public record SharedDelta(CausalLogDelta delta, int distance) {

    public SharedDelta {
        if (distance < 0) {
            throw new IllegalArgumentException(
                    "A shared delta's distance from its log's task is not negative, was "
                            + distance);
        }
    }
}
