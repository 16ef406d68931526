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

package org.apache.flink.runtime.io.network.partition;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;

import javax.annotation.Nullable;

/**
 * PATCH of Flink's behaviour, kept to this one class in Flink's package.
 *
 * <p>Why: a task finds its TaskManager's Clonos context through the objects the TaskManager's
 * network made for it; a task with outputs and no inputs (a source) has only its result partitions,
 * and a partition knows its partition manager (Clonos's, which owns the context) only in a
 * protected field without getter, readable from this package.
 */
@Internal
public final class ClonosPartitionPatch {

    private ClonosPartitionPatch() {}

    /** The partition manager of a result partition; null for a writer that is not a partition. */
    @Nullable
    public static ResultPartitionManager partitionManagerOf(ResultPartitionWriter writer) {
        return writer instanceof ResultPartition
                ? ((ResultPartition) writer).partitionManager
                : null;
    }
}
