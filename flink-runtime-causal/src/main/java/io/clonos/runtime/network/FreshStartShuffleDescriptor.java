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

import io.clonos.runtime.reflect.FlinkFields;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor.PartitionConnectionInfo;

import java.net.InetSocketAddress;

/**
 * Marks the Netty shuffle descriptor of a partition whose producing attempt starts afresh ({@link
 * FreshStarts}). Flink accepts no subclass of its descriptor (it checks the exact class), so the
 * mark is the descriptor's connection info: Flink's, wrapped, answering every question as Flink's
 * does.
 *
 * <p>PATCH of Flink's behaviour: the descriptor's connection info has no getter, so it is read
 * (and, on the TaskManager, looked at) through the private field by reflection.
 */
@Internal
public final class FreshStartShuffleDescriptor {

    private FreshStartShuffleDescriptor() {}

    /** The same descriptor, marked. */
    public static NettyShuffleDescriptor of(NettyShuffleDescriptor netty) {
        return new NettyShuffleDescriptor(
                netty.storesLocalResourcesOn().orElseThrow(),
                new FreshStartConnectionInfo(connectionInfo(netty)),
                netty.getResultPartitionID(),
                netty.getTierShuffleDescriptors());
    }

    /** Whether the descriptor was marked by {@link #of}. */
    public static boolean isMarked(Object descriptor) {
        return descriptor instanceof NettyShuffleDescriptor
                && connectionInfo((NettyShuffleDescriptor) descriptor)
                        instanceof FreshStartConnectionInfo;
    }

    private static PartitionConnectionInfo connectionInfo(NettyShuffleDescriptor netty) {
        return (PartitionConnectionInfo)
                FlinkFields.get(netty, NettyShuffleDescriptor.class, "partitionConnectionInfo");
    }

    /** Flink's connection info of the partition, unchanged. */
    private static final class FreshStartConnectionInfo implements PartitionConnectionInfo {
        private static final long serialVersionUID = 1L;
        private final PartitionConnectionInfo flink;

        FreshStartConnectionInfo(PartitionConnectionInfo flink) {
            this.flink = flink;
        }

        @Override
        public InetSocketAddress getAddress() {
            return flink.getAddress();
        }

        @Override
        public int getConnectionIndex() {
            return flink.getConnectionIndex();
        }
    }
}
