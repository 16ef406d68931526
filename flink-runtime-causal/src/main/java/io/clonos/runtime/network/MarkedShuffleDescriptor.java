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

import io.clonos.runtime.reflect.ReflectedField;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor.PartitionConnectionInfo;

import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.Set;

/**
 * Marks the Netty shuffle descriptor of a partition with what the JobManager tells the TaskManager
 * that writes it ({@link Mark}). Flink deploys a task with nothing else Clonos could use, and
 * accepts no subclass of its descriptor (it checks the exact class), so the marks ride in the
 * descriptor's connection info: Flink's, wrapped, answering every question as Flink's does.
 *
 * <p>PATCH of Flink's behaviour: the descriptor's connection info has no getter, so it is read
 * (and, on the TaskManager, looked at) through the private field by reflection.
 */
@Internal
public final class MarkedShuffleDescriptor {

    /** What the JobManager tells the TaskManager of a partition. */
    public enum Mark {
        /** The producing attempt starts afresh ({@code FreshStarts}): it replays nothing. */
        FRESH_START,
        /**
         * The partition's job does not checkpoint: nothing would ever truncate an in-flight log of
         * it, so it has none.
         */
        UNLOGGED
    }

    private static final ReflectedField CONNECTION_INFO =
            ReflectedField.of(NettyShuffleDescriptor.class, "partitionConnectionInfo");

    private MarkedShuffleDescriptor() {}

    /** The same descriptor with {@code marks}; Flink's own if there are none. */
    public static NettyShuffleDescriptor of(NettyShuffleDescriptor netty, Set<Mark> marks) {
        if (marks.isEmpty()) {
            return netty;
        }
        return new NettyShuffleDescriptor(
                netty.storesLocalResourcesOn().orElseThrow(),
                new MarkedConnectionInfo(connectionInfo(netty), EnumSet.copyOf(marks)),
                netty.getResultPartitionID(),
                netty.getTierShuffleDescriptors());
    }

    /** Whether {@link #of} marked the descriptor with {@code mark}. */
    public static boolean isMarked(Object descriptor, Mark mark) {
        return descriptor instanceof NettyShuffleDescriptor netty
                && connectionInfo(netty) instanceof MarkedConnectionInfo marked
                && marked.marks.contains(mark);
    }

    private static PartitionConnectionInfo connectionInfo(NettyShuffleDescriptor netty) {
        return (PartitionConnectionInfo) CONNECTION_INFO.get(netty);
    }

    /** Flink's connection info of the partition, unchanged, and the marks. */
    private static final class MarkedConnectionInfo implements PartitionConnectionInfo {
        private static final long serialVersionUID = 1L;
        private final PartitionConnectionInfo flink;
        private final EnumSet<Mark> marks;

        MarkedConnectionInfo(PartitionConnectionInfo flink, EnumSet<Mark> marks) {
            this.flink = flink;
            this.marks = marks;
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
