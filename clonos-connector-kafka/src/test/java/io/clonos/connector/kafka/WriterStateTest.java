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

package io.clonos.connector.kafka;

import org.apache.flink.core.memory.DataOutputSerializer;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The writer's checkpoint, and what a successor reads back, as the writer relies on them. */
class WriterStateTest {

    @Test
    void aCheckpointSurvivesItsSerializer() throws IOException {
        byte[] id = ClonosKafkaWriter.writerId("job", "sink", 3);
        WriterCheckpoint checkpoint =
                new WriterCheckpoint(
                        id,
                        42,
                        Map.of(new TopicPartition("a", 0), 7L, new TopicPartition("a", 1), 0L));
        WriterCheckpoint.Serializer serializer = new WriterCheckpoint.Serializer();
        assertThat(serializer.deserialize(1, serializer.serialize(checkpoint)))
                .isEqualTo(checkpoint);
        assertThatThrownBy(() -> serializer.deserialize(2, serializer.serialize(checkpoint)))
                .hasMessageContaining("version 2");
        assertThatThrownBy(() -> serializer.deserialize(1, Arrays.copyOf(id, 10)))
                .isInstanceOf(IOException.class);
    }

    /**
     * Flink's KafkaSink writer state has the same version and the same place in the operator's
     * state: its bytes (a transactional id prefix) must be refused with the setting named, short or
     * long.
     */
    @Test
    void flinksKafkaWriterStateIsRefusedWithTheSettingNamed() throws IOException {
        WriterCheckpoint.Serializer serializer = new WriterCheckpoint.Serializer();
        for (String prefix : List.of("kafka-sink", "a-transactional-id-prefix-of-a-longer-job")) {
            DataOutputSerializer flinks = new DataOutputSerializer(64);
            flinks.writeUTF(prefix);
            assertThatThrownBy(() -> serializer.deserialize(1, flinks.getCopyOfBuffer()))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("clonos.kafka-sink.exactly-once");
        }
    }

    @Test
    void writersOfOtherSubtasksOrJobsHaveOtherIds() {
        assertThat(ClonosKafkaWriter.writerId("job", "sink", 0))
                .isNotEqualTo(ClonosKafkaWriter.writerId("job", "sink", 1))
                .isNotEqualTo(ClonosKafkaWriter.writerId("other", "sink", 0))
                .hasSize(OutputHeaders.WRITER_ID_BYTES);
    }

    @Test
    void publishedPositionsAreFoundInOrderAndGapsAreNot() {
        long a = PublishedOutput.digest("t", null, new byte[] {1});
        long b = PublishedOutput.digest("t", new byte[] {1}, null);
        PublishedOutput published =
                new PublishedOutput(new long[] {12, 10, 13}, new long[] {b, a, a}, List.of(), null);
        assertThat(published.lastPosition()).isEqualTo(13);
        assertThat(published.digestAt(9)).isEqualTo(PublishedOutput.NOT_PUBLISHED);
        assertThat(published.digestAt(10)).isEqualTo(a);
        assertThat(published.digestAt(11)).isEqualTo(PublishedOutput.NOT_PUBLISHED);
        assertThat(published.digestAt(12)).isEqualTo(b);
        assertThat(published.digestAt(14)).isEqualTo(PublishedOutput.NOT_PUBLISHED);
        // a null key and an empty one are different records
        assertThat(PublishedOutput.digest("t", null, new byte[0]))
                .isNotEqualTo(PublishedOutput.digest("t", new byte[0], new byte[0]));
    }
}
