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

package io.clonos.kafka.broker;

import org.apache.flink.annotation.Internal;
import org.apache.flink.util.FileUtils;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Properties;

/**
 * A real Kafka broker (KRaft, broker and controller in one node) in this JVM, listening on
 * localhost, for the tests and the experiments (these machines run no containers). Its data lives
 * in a temporary directory that {@link #close()} deletes.
 */
@Internal
public final class EmbeddedKafka implements AutoCloseable {

    private final KafkaRaftServer server;
    private final Path directory;
    private final String bootstrapServers;

    private EmbeddedKafka(KafkaRaftServer server, Path directory, String bootstrapServers) {
        this.server = server;
        this.directory = directory;
        this.bootstrapServers = bootstrapServers;
    }

    /** Formats a fresh log directory and starts the broker; returns once it serves. */
    public static EmbeddedKafka start() throws Exception {
        Path directory = Files.createTempDirectory("clonos-kafka");
        int[] ports = freePorts(2);
        int brokerPort = ports[0];
        int controllerPort = ports[1];
        Properties props = new Properties();
        props.put("process.roles", "broker,controller");
        props.put("node.id", "1");
        props.put("controller.quorum.voters", "1@localhost:" + controllerPort);
        props.put(
                "listeners",
                "PLAINTEXT://localhost:"
                        + brokerPort
                        + ",CONTROLLER://localhost:"
                        + controllerPort);
        props.put("advertised.listeners", "PLAINTEXT://localhost:" + brokerPort);
        props.put("controller.listener.names", "CONTROLLER");
        props.put("inter.broker.listener.name", "PLAINTEXT");
        props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        props.put("log.dirs", directory.toString());
        props.put("auto.create.topics.enable", "false");
        // the Nexmark events carry their event times, months past: retention by time would
        // delete them, unread, as soon as a segment rolled
        props.put("log.retention.ms", "-1");
        // one node: every internal topic has one replica, and few partitions start faster
        props.put("offsets.topic.replication.factor", "1");
        props.put("offsets.topic.num.partitions", "1");
        props.put("transaction.state.log.replication.factor", "1");
        props.put("transaction.state.log.min.isr", "1");
        props.put("transaction.state.log.num.partitions", "4");
        props.put("group.initial.rebalance.delay.ms", "0");
        KafkaConfig config = KafkaConfig.fromProps(props);

        try (PrintStream quiet = new PrintStream(OutputStream.nullOutputStream())) {
            new Formatter()
                    .setPrintStream(quiet)
                    .setNodeId(1)
                    .setClusterId(Uuid.randomUuid().toString())
                    .setDirectories(List.of(directory.toString()))
                    .setMetadataLogDirectory(directory.toString())
                    .setControllerListenerName("CONTROLLER")
                    .setReleaseVersion(MetadataVersion.LATEST_PRODUCTION)
                    .run();
        }
        KafkaRaftServer server = new KafkaRaftServer(config, Time.SYSTEM);
        try {
            server.startup();
        } catch (RuntimeException e) {
            FileUtils.deleteDirectoryQuietly(directory.toFile());
            throw e;
        }
        return new EmbeddedKafka(server, directory, "localhost:" + brokerPort);
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    /**
     * A broker in a process of its own ({@link KafkaProcess}): writes its bootstrap servers to the
     * file named by the argument once it serves, and stops when its standard input closes.
     */
    public static void main(String[] args) throws Exception {
        try (EmbeddedKafka kafka = start()) {
            Path ready = Path.of(args[0]);
            Path partial = ready.resolveSibling(ready.getFileName() + ".part");
            Files.writeString(partial, kafka.bootstrapServers());
            Files.move(partial, ready, StandardCopyOption.ATOMIC_MOVE);
            while (System.in.read() >= 0) {
                // the experiment holds the pipe open while it needs the broker
            }
        }
    }

    @Override
    public void close() {
        server.shutdown();
        server.awaitShutdown();
        FileUtils.deleteDirectoryQuietly(directory.toFile());
    }

    /**
     * {@code count} distinct free ports: the sockets are held together while the kernel picks, so
     * it cannot hand out one port twice (it did, one after the other).
     */
    private static int[] freePorts(int count) throws IOException {
        ServerSocket[] sockets = new ServerSocket[count];
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                sockets[i] = new ServerSocket(0);
                ports[i] = sockets[i].getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket socket : sockets) {
                if (socket != null) {
                    socket.close();
                }
            }
        }
    }
}
