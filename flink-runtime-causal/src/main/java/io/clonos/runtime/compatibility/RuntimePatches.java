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

package io.clonos.runtime.compatibility;

import io.clonos.runtime.network.MarkedShuffleDescriptor;

import org.apache.flink.annotation.Internal;
import org.apache.flink.contrib.streaming.state.ClonosRocksDBLoadPatch;
import org.apache.flink.runtime.checkpoint.ClonosCheckpointPlanPatch;
import org.apache.flink.runtime.io.network.netty.ClonosConsumerConnectionPatch;
import org.apache.flink.runtime.io.network.partition.ClonosPartitionPatch;
import org.apache.flink.runtime.io.network.partition.consumer.ClonosChannelProbe;
import org.apache.flink.runtime.jobgraph.ClonosChainedSourcesPatch;
import org.apache.flink.runtime.operators.coordination.ClonosCoordinatorGatewayPatch;
import org.apache.flink.runtime.scheduler.ClonosEndOfDataPatch;
import org.apache.flink.runtime.taskmanager.ClonosTaskGatesPatch;

import java.util.List;

/** The patches of flink-runtime-causal: the JobManager's and the network's. */
@Internal
public final class RuntimePatches implements PatchSet {

    @Override
    public List<Class<?>> patchClasses() {
        return List.of(
                ClonosRocksDBLoadPatch.class,
                ClonosCheckpointPlanPatch.class,
                ClonosConsumerConnectionPatch.class,
                ClonosPartitionPatch.class,
                ClonosChannelProbe.class,
                ClonosChainedSourcesPatch.class,
                ClonosCoordinatorGatewayPatch.class,
                ClonosEndOfDataPatch.class,
                ClonosTaskGatesPatch.class,
                MarkedShuffleDescriptor.class);
    }
}
