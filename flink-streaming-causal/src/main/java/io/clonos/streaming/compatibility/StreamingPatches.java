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

package io.clonos.streaming.compatibility;

import io.clonos.runtime.compatibility.PatchSet;

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.operators.ClonosLegacySourcePatch;
import org.apache.flink.streaming.api.operators.ClonosSourceReaderPatch;
import org.apache.flink.streaming.api.operators.ClonosTimerQueuePatch;
import org.apache.flink.streaming.api.operators.async.ClonosAsyncWaitPatch;
import org.apache.flink.streaming.api.windowing.assigners.ClonosWindowStaggerPatch;
import org.apache.flink.streaming.runtime.io.ClonosNetworkInputPatch;
import org.apache.flink.streaming.runtime.tasks.ClonosOutputStatusPatch;

import java.util.List;

/** The patches of flink-streaming-causal: the tasks'. */
@Internal
public final class StreamingPatches implements PatchSet {

    @Override
    public List<Class<?>> patchClasses() {
        return List.of(
                ClonosLegacySourcePatch.class,
                ClonosSourceReaderPatch.class,
                ClonosTimerQueuePatch.class,
                ClonosAsyncWaitPatch.class,
                ClonosWindowStaggerPatch.class,
                ClonosNetworkInputPatch.class,
                ClonosOutputStatusPatch.class);
    }
}
