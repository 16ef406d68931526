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

package io.clonos.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka's connector and client from a distribution's opt/nexmark, as the {@code
 * pipeline.classpaths} of a job that reads or writes Kafka (lib/ does not have them, as in Flink's
 * distribution).
 */
final class KafkaConnectorJars {

    private KafkaConnectorJars() {}

    /** The class path URLs, joined by ';'. */
    static String of(Path dist) throws IOException {
        return jars(dist, "flink-connector-kafka-", "kafka-clients-");
    }

    /** The same and the Clonos Kafka sink, which serves Flink's exactly-once KafkaSink. */
    static String withClonosSink(Path dist) throws IOException {
        return jars(dist, "flink-connector-kafka-", "kafka-clients-", "clonos-connector-kafka-");
    }

    private static String jars(Path dist, String... prefixes) throws IOException {
        try (Stream<Path> jars = Files.list(dist.resolve("opt/nexmark"))) {
            List<String> urls =
                    jars.filter(
                                    jar ->
                                            Stream.of(prefixes)
                                                    .anyMatch(
                                                            jar.getFileName().toString()
                                                                    ::startsWith))
                            .map(jar -> jar.toUri().toString())
                            .collect(Collectors.toList());
            assertThat(urls)
                    .as("jars %s in opt/nexmark", List.of(prefixes))
                    .hasSize(prefixes.length);
            return String.join(";", urls);
        }
    }
}
