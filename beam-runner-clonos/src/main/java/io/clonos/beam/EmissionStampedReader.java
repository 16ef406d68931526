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

package io.clonos.beam;

import org.apache.flink.annotation.Internal;

import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.joda.time.Instant;

import java.io.IOException;
import java.util.NoSuchElementException;

/**
 * A reader of a Kafka split whose records {@link CausalProcessingTime} stamps after the source: it
 * gives every record the earliest timestamp, so that the wall-clock time Beam's reader stamped it
 * with, which a recovered reader cannot reproduce, reaches no step. The split it names for a
 * checkpoint is the {@link SplitPerPartitionSource} that made it, so that a restored reader is made
 * the same way. Everything else is the wrapped reader's, its watermark too (the wall clock when it
 * is asked, which no record stamped after the source's hand-over can be behind).
 */
@Internal
final class EmissionStampedReader<T> extends UnboundedSource.UnboundedReader<T> {

    private final UnboundedSource.UnboundedReader<T> reader;
    private final UnboundedSource<T, ?> source;

    EmissionStampedReader(UnboundedSource.UnboundedReader<T> reader, UnboundedSource<T, ?> source) {
        this.reader = reader;
        this.source = source;
    }

    @Override
    public boolean start() throws IOException {
        return reader.start();
    }

    @Override
    public boolean advance() throws IOException {
        return reader.advance();
    }

    @Override
    public T getCurrent() throws NoSuchElementException {
        return reader.getCurrent();
    }

    @Override
    public byte[] getCurrentRecordId() throws NoSuchElementException {
        return reader.getCurrentRecordId();
    }

    @Override
    public Instant getCurrentTimestamp() throws NoSuchElementException {
        // asked for its NoSuchElementException only: a reader without a current record throws
        reader.getCurrentTimestamp();
        return BoundedWindow.TIMESTAMP_MIN_VALUE;
    }

    @Override
    public Instant getWatermark() {
        return reader.getWatermark();
    }

    @Override
    public UnboundedSource.CheckpointMark getCheckpointMark() {
        return reader.getCheckpointMark();
    }

    @Override
    public long getSplitBacklogBytes() {
        return reader.getSplitBacklogBytes();
    }

    @Override
    public long getTotalBacklogBytes() {
        return reader.getTotalBacklogBytes();
    }

    @Override
    public UnboundedSource<T, ?> getCurrentSource() {
        return source;
    }

    @Override
    public void close() throws IOException {
        reader.close();
    }
}
