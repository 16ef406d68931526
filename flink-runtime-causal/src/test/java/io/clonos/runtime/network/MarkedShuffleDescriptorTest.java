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
package io.clonos.runtime.network;

import io.clonos.runtime.network.MarkedShuffleDescriptor.Mark;

import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor.NetworkPartitionConnectionInfo;
import org.apache.flink.util.InstantiationUtil;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The marks of a partition (its producer starts afresh, it has no in-flight log), as Flink sees
 * them and as Clonos reads them.
 */
class MarkedShuffleDescriptorTest {

    private static NettyShuffleDescriptor flinks() {
        return new NettyShuffleDescriptor(
                ResourceID.generate(),
                new NetworkPartitionConnectionInfo(new InetSocketAddress("localhost", 4711), 3),
                new ResultPartitionID(),
                List.of());
    }

    @Test
    void aMarkedDescriptorIsFlinksOwnTypeWithTheSameConnectionAndSurvivesSerialization()
            throws Exception {
        NettyShuffleDescriptor flinks = flinks();
        NettyShuffleDescriptor marked =
                MarkedShuffleDescriptor.of(flinks, Set.of(Mark.FRESH_START));

        assertThat(marked.getClass())
                .as("Flink checks the exact class")
                .isEqualTo(NettyShuffleDescriptor.class);
        assertThat(marked.getConnectionId()).isEqualTo(flinks.getConnectionId());
        assertThat(marked.getResultPartitionID()).isEqualTo(flinks.getResultPartitionID());
        assertThat(marked.storesLocalResourcesOn()).isEqualTo(flinks.storesLocalResourcesOn());
        assertThat(MarkedShuffleDescriptor.isMarked(marked, Mark.FRESH_START)).isTrue();
        assertThat(MarkedShuffleDescriptor.isMarked(marked, Mark.UNLOGGED)).isFalse();
        assertThat(MarkedShuffleDescriptor.isMarked(flinks, Mark.FRESH_START)).isFalse();

        NettyShuffleDescriptor shipped =
                InstantiationUtil.clone(marked, getClass().getClassLoader());
        assertThat(MarkedShuffleDescriptor.isMarked(shipped, Mark.FRESH_START)).isTrue();
        assertThat(shipped.getConnectionId()).isEqualTo(flinks.getConnectionId());
    }

    @Test
    void aDescriptorCarriesBothMarksAndNoMarkLeavesFlinksOwn() {
        NettyShuffleDescriptor flinks = flinks();
        NettyShuffleDescriptor both =
                MarkedShuffleDescriptor.of(flinks, Set.of(Mark.FRESH_START, Mark.UNLOGGED));

        assertThat(MarkedShuffleDescriptor.isMarked(both, Mark.FRESH_START)).isTrue();
        assertThat(MarkedShuffleDescriptor.isMarked(both, Mark.UNLOGGED)).isTrue();
        assertThat(MarkedShuffleDescriptor.of(flinks, Set.of())).isSameAs(flinks);
    }
}
