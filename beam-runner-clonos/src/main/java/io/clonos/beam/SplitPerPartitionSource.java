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

import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.transforms.display.DisplayData;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A Kafka source split as finely as it splits: one partition per split. Beam's Kafka reader
 * interleaves the partitions of one split by the batches its consumer thread happens to poll, an
 * order no determinant records; Beam's Flink reader emits each split through an output of its own,
 * whose order across splits Clonos logs (a split per record) and a recovered reader reproduces. So
 * a reader that holds several partitions replays them exactly only when each is a split. Beam's
 * Flink runner asks a source for as many splits as the job's (maximum) parallelism, which for a
 * topic with more partitions than subtasks puts several partitions into each split.
 *
 * <p>A source made {@code stampedAfterTheSource} leaves its records' timestamps to {@link
 * CausalProcessingTime} ({@link EmissionStampedReader}). Everything else is the wrapped source's.
 */
@Internal
final class SplitPerPartitionSource<T, M extends UnboundedSource.CheckpointMark>
        extends UnboundedSource<T, M> {

    private static final long serialVersionUID = 1L;

    private final UnboundedSource<T, M> source;
    private final boolean stampedAfterTheSource;

    SplitPerPartitionSource(UnboundedSource<T, M> source, boolean stampedAfterTheSource) {
        this.source = source;
        this.stampedAfterTheSource = stampedAfterTheSource;
    }

    boolean stampedAfterTheSource() {
        return stampedAfterTheSource;
    }

    /**
     * Kafka's source makes as many splits as it is asked for, up to one per partition: asked for
     * more than any topic has partitions, it makes one per partition.
     */
    @Override
    public List<SplitPerPartitionSource<T, M>> split(int desiredNumSplits, PipelineOptions options)
            throws Exception {
        List<SplitPerPartitionSource<T, M>> splits = new ArrayList<>();
        for (UnboundedSource<T, M> split : source.split(Integer.MAX_VALUE, options)) {
            splits.add(new SplitPerPartitionSource<>(split, stampedAfterTheSource));
        }
        return splits;
    }

    @Override
    public UnboundedReader<T> createReader(PipelineOptions options, M checkpointMark)
            throws IOException {
        UnboundedReader<T> reader = source.createReader(options, checkpointMark);
        return stampedAfterTheSource ? new EmissionStampedReader<>(reader, this) : reader;
    }

    @Override
    public Coder<M> getCheckpointMarkCoder() {
        return source.getCheckpointMarkCoder();
    }

    @Override
    public boolean requiresDeduping() {
        return source.requiresDeduping();
    }

    @Override
    public Coder<T> getOutputCoder() {
        return source.getOutputCoder();
    }

    @Override
    public void validate() {
        source.validate();
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
        source.populateDisplayData(builder);
    }
}
