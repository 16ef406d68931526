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

import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.shaded.netty4.io.netty.channel.embedded.EmbeddedChannel;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Producers hear of their remote consumers' broken connections. */
class ConsumerConnectionsTest {

    private static final InetSocketAddress CONSUMER = new InetSocketAddress("127.0.0.1", 41234);

    /** A consumer TaskManager's connection, as Flink's server holds it. */
    private static EmbeddedChannel connectionFrom(InetSocketAddress consumer) {
        return new EmbeddedChannel() {
            @Override
            protected SocketAddress remoteAddress0() {
                return consumer;
            }
        };
    }

    @Test
    void everyRunningProducerThatAConnectionServedReportsItsCloseOnce() {
        ConsumerConnections connections = new ConsumerConnections();
        ResultPartitionID first = new ResultPartitionID();
        ResultPartitionID second = new ResultPartitionID();
        ResultPartitionID ended = new ResultPartitionID();
        List<String> reports = new ArrayList<>();
        connections.register(first, address -> reports.add("first " + address));
        connections.register(second, address -> reports.add("second " + address));
        connections.register(ended, address -> reports.add("ended " + address));
        EmbeddedChannel connection = connectionFrom(CONSUMER);

        connections.watch(first, connection);
        connections.watch(first, connection);
        connections.watch(second, connection);
        connections.watch(ended, connection);
        connections.unregister(ended);
        assertThat(reports).as("while the connection is open").isEmpty();

        connection.close();

        assertThat(reports).containsExactlyInAnyOrder("first " + CONSUMER, "second " + CONSUMER);
        connection.close();
        assertThat(reports).as("after a second close").hasSize(2);
    }

    @Test
    void aConnectionThatClosedBeforeItWasWatchedIsReported() {
        ConsumerConnections connections = new ConsumerConnections();
        ResultPartitionID partition = new ResultPartitionID();
        List<InetSocketAddress> reports = new ArrayList<>();
        connections.register(partition, reports::add);
        EmbeddedChannel connection = connectionFrom(CONSUMER);
        // the peer's address is known while the connection is open, as when a reader is created
        connection.remoteAddress();
        connection.close();

        connections.watch(partition, connection);

        assertThat(reports).containsExactly(CONSUMER);
    }

    @Test
    void aLocalConsumerHasNoConnectionToWatch() {
        ConsumerConnections connections = new ConsumerConnections();
        ResultPartitionID partition = new ResultPartitionID();
        List<InetSocketAddress> reports = new ArrayList<>();
        connections.register(partition, reports::add);

        connections.watch(partition, null);

        assertThat(reports).isEmpty();
    }
}
