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

package io.clonos.nexmark.failure;

import io.clonos.kafka.broker.EmbeddedKafka;

import org.apache.flink.annotation.Internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Kafka broker ({@link EmbeddedKafka}: KRaft, one node) in a JVM of its own, started from this
 * JVM's class path. It writes its bootstrap servers to a file once it serves, and stops (deleting
 * its data) when its standard input closes, so that it also ends when the experiment's JVM dies.
 */
@Internal
final class KafkaProcess implements KafkaBroker {

    private static final Duration START_TIMEOUT = Duration.ofMinutes(2);

    private final Process process;
    private final String bootstrapServers;

    private KafkaProcess(Process process, String bootstrapServers) {
        this.process = process;
        this.bootstrapServers = bootstrapServers;
    }

    static KafkaProcess start(Path logDir) throws Exception {
        Files.createDirectories(logDir);
        Path ready = logDir.resolve("kafka.bootstrap");
        Files.deleteIfExists(ready);
        Path log = logDir.resolve("kafka.out");
        Process process =
                new ProcessBuilder(
                                List.of(
                                        Path.of(System.getProperty("java.home"), "bin", "java")
                                                .toString(),
                                        "-Xmx1g",
                                        "-cp",
                                        System.getProperty("java.class.path"),
                                        EmbeddedKafka.class.getName(),
                                        ready.toString()))
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        long deadline = System.currentTimeMillis() + START_TIMEOUT.toMillis();
        while (!Files.exists(ready)) {
            if (!process.isAlive() || System.currentTimeMillis() > deadline) {
                process.destroyForcibly();
                throw new IOException(
                        "The Kafka broker process "
                                + (process.isAlive()
                                        ? "did not serve within " + START_TIMEOUT.toSeconds() + " s"
                                        : "ended")
                                + "; its output is in "
                                + log);
            }
            Thread.sleep(100);
        }
        return new KafkaProcess(process, Files.readString(ready, StandardCharsets.UTF_8).trim());
    }

    @Override
    public String bootstrapServers() {
        return bootstrapServers;
    }

    @Override
    public String where() {
        return "in a process of its own, pid " + process.pid();
    }

    @Override
    public void close() throws Exception {
        process.getOutputStream().close();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }
}
