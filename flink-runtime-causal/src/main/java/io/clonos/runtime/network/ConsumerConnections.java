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

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.shaded.netty4.io.netty.channel.Channel;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The connections of one TaskManager's remote consumers, watched for the producers: when one closes
 * while its producer runs, the producer reports the consumer's host to the JobManager, which probes
 * the TaskManagers there ({@code LostTaskManagerDetector}). A TaskManager that runs only consumers
 * (a sink's slot) feeds nobody, so no consumer's report would name it, and without the producers'
 * the JobManager would find it dead only by its heartbeats.
 *
 * <p>A connection also closes when its consumer's TaskManager lets it go (no channel of it reads
 * from this TaskManager any more); the report then costs the JobManager a probe that the
 * TaskManager answers, and nothing else. Thread-safe: producers register on their task threads,
 * connections are watched and close on Netty's threads.
 */
@Internal
public final class ConsumerConnections {

    private static final Logger LOG = LoggerFactory.getLogger(ConsumerConnections.class);

    /** Each running producer's report of a consumer's broken connection, by its partition. */
    private final Map<ResultPartitionID, Consumer<InetSocketAddress>> reporters =
            new ConcurrentHashMap<>();

    /** The partitions that a connection serves and that are watched, by connection. */
    private final Map<Channel, Set<ResultPartitionID>> watched = new ConcurrentHashMap<>();

    /** The producer of {@code partition} runs: it reports its consumers' broken connections. */
    public void register(ResultPartitionID partition, Consumer<InetSocketAddress> reporter) {
        reporters.put(partition, reporter);
    }

    /** The producer of {@code partition} ended: a connection that closes now is not its concern. */
    public void unregister(ResultPartitionID partition) {
        reporters.remove(partition);
    }

    /**
     * A consumer reads a subpartition of {@code partition} through {@code connection} (null for a
     * local consumer, which shares this TaskManager's fate).
     */
    void watch(ResultPartitionID partition, @Nullable Channel connection) {
        if (connection == null) {
            return;
        }
        // read now: a closed channel may no longer know its peer
        SocketAddress remote = connection.remoteAddress();
        if (!(remote instanceof InetSocketAddress)) {
            return;
        }
        Set<ResultPartitionID> fresh = ConcurrentHashMap.newKeySet();
        fresh.add(partition);
        Set<ResultPartitionID> known = watched.putIfAbsent(connection, fresh);
        if (known != null) {
            known.add(partition);
            return;
        }
        // outside the map's update: the listener of a channel closed already runs at once
        connection
                .closeFuture()
                .addListener(closed -> closed(connection, (InetSocketAddress) remote));
    }

    private void closed(Channel connection, InetSocketAddress consumer) {
        Set<ResultPartitionID> partitions = watched.remove(connection);
        if (partitions == null) {
            return;
        }
        for (ResultPartitionID partition : partitions) {
            Consumer<InetSocketAddress> reporter = reporters.get(partition);
            if (reporter != null) {
                LOG.debug(
                        "The connection of a consumer of {} from {} closed: reported.",
                        partition,
                        consumer);
                reporter.accept(consumer);
            }
        }
    }

    /** Forgets every producer (the TaskManager's network shuts down). */
    void clear() {
        reporters.clear();
        watched.clear();
    }
}
