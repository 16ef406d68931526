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

import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import org.apache.kafka.common.TopicPartition;

import java.io.EOFException;
import java.io.IOException;
import java.io.UTFDataFormatException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What a {@link ClonosKafkaWriter} checkpoints: its id, the position its next record takes, and per
 * partition it may write the offset from which a successor reads back what it published after the
 * checkpoint (every record of the writer since is at or after it).
 */
@Internal
public final class WriterCheckpoint {

    private final byte[] writerId;
    private final long nextPosition;
    private final Map<TopicPartition, Long> readFrom;

    WriterCheckpoint(byte[] writerId, long nextPosition, Map<TopicPartition, Long> readFrom) {
        if (writerId.length != OutputHeaders.WRITER_ID_BYTES) {
            throw new IllegalArgumentException("A writer id has 16 bytes, not " + writerId.length);
        }
        this.writerId = writerId.clone();
        this.nextPosition = nextPosition;
        this.readFrom = Map.copyOf(readFrom);
    }

    byte[] writerId() {
        return writerId.clone();
    }

    long nextPosition() {
        return nextPosition;
    }

    Map<TopicPartition, Long> readFrom() {
        return readFrom;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WriterCheckpoint other
                && Arrays.equals(writerId, other.writerId)
                && nextPosition == other.nextPosition
                && readFrom.equals(other.readFrom);
    }

    @Override
    public int hashCode() {
        return Objects.hash(Arrays.hashCode(writerId), nextPosition, readFrom);
    }

    @Override
    public String toString() {
        return "WriterCheckpoint{next position " + nextPosition + ", read from " + readFrom + "}";
    }

    /** Version 1: the id, the position, then the partitions with their offsets. */
    static final class Serializer implements SimpleVersionedSerializer<WriterCheckpoint> {

        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(WriterCheckpoint checkpoint) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(64);
            out.write(checkpoint.writerId);
            out.writeLong(checkpoint.nextPosition);
            out.writeInt(checkpoint.readFrom.size());
            for (Map.Entry<TopicPartition, Long> entry : checkpoint.readFrom.entrySet()) {
                out.writeUTF(entry.getKey().topic());
                out.writeInt(entry.getKey().partition());
                out.writeLong(entry.getValue());
            }
            return out.getCopyOfBuffer();
        }

        @Override
        public WriterCheckpoint deserialize(int version, byte[] serialized) throws IOException {
            if (version != 1) {
                throw new IOException(
                        "A Clonos Kafka writer's checkpoint of version "
                                + version
                                + "; this sink reads version 1");
            }
            DataInputDeserializer in = new DataInputDeserializer(serialized);
            byte[] writerId = new byte[OutputHeaders.WRITER_ID_BYTES];
            long nextPosition;
            Map<TopicPartition, Long> readFrom = new LinkedHashMap<>();
            try {
                in.readFully(writerId);
                nextPosition = in.readLong();
                int partitions = in.readInt();
                if (partitions < 0 || partitions > serialized.length) {
                    throw notOurs(serialized);
                }
                for (int i = 0; i < partitions; i++) {
                    String topic = in.readUTF();
                    int partition = in.readInt();
                    readFrom.put(new TopicPartition(topic, partition), in.readLong());
                }
            } catch (EOFException | UTFDataFormatException e) {
                throw notOurs(serialized);
            }
            if (in.available() > 0) {
                throw notOurs(serialized);
            }
            return new WriterCheckpoint(writerId, nextPosition, readFrom);
        }
    }

    /**
     * Bytes of another writer's state under the same name: Flink's {@code KafkaSink} writer state
     * (its version is 1 as well) when {@code clonos.kafka-sink.exactly-once} changed between the
     * checkpoint and the restore.
     */
    private static IOException notOurs(byte[] serialized) {
        return new IOException(
                "The sink's writer state ("
                        + serialized.length
                        + " bytes) is not a Clonos Kafka writer's checkpoint: a checkpoint taken"
                        + " with Flink's KafkaSink (clonos.kafka-sink.exactly-once:"
                        + " two-phase-commit) cannot be restored into the Clonos Kafka sink. Restore"
                        + " it with the setting it was taken with, or start the job without it.");
    }
}
