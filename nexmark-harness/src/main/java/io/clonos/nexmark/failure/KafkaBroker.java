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

import java.nio.file.Path;

/**
 * The failure experiment's Kafka broker: in the experiment's JVM ({@link EmbeddedKafka}) next to
 * embedded clusters, or in a process of its own ({@link KafkaProcess}) next to clusters of separate
 * processes, as a user's broker would be, so that its work is not the launcher's and the launcher's
 * pauses are not the broker's.
 */
@Internal
public interface KafkaBroker extends AutoCloseable {

    String bootstrapServers();

    /** Where it runs, for the experiment's progress lines. */
    String where();

    /**
     * Starts a broker for {@code clusters}: in this JVM beside embedded clusters, else in a process
     * of its own with its output under {@code output}/kafka.
     */
    static KafkaBroker beside(FailureClusters clusters, Path output) throws Exception {
        return EmbeddedFailureClusters.NAME.equals(clusters.name())
                ? inThisJvm(EmbeddedKafka.start())
                : inAProcessOfItsOwn(output.resolve("kafka"));
    }

    /** A broker in a process of its own, with its output under {@code logDir}. */
    static KafkaBroker inAProcessOfItsOwn(Path logDir) throws Exception {
        return KafkaProcess.start(logDir);
    }

    @Override
    void close() throws Exception;

    /** A broker in this JVM. */
    private static KafkaBroker inThisJvm(EmbeddedKafka kafka) {
        return new KafkaBroker() {
            @Override
            public String bootstrapServers() {
                return kafka.bootstrapServers();
            }

            @Override
            public String where() {
                return "in this JVM";
            }

            @Override
            public void close() {
                kafka.close();
            }
        };
    }
}
