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

package io.clonos.streaming.source;

import io.clonos.runtime.causal.CausalLogId;
import io.clonos.runtime.causal.CausalRecovery;
import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.TaskCausalLog;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.core.io.InputStatus;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A split given again to a reader that still reads it is dropped (Flink's Kafka enumerator repeats
 * assignments when its discoveries pile up, and the reader would read the split again from its
 * start); once the reader finished a split, a split of that id is its own again.
 */
class CausalSourceReaderTest {

    @Test
    void aSplitGivenAgainWhileItIsReadIsDroppedAndOneGivenAfterItFinishedIsRead() throws Exception {
        SplitsReader wrapped = new SplitsReader();
        CausalLogId id = CausalLogId.main("source", 0);
        CausalTask task =
                new CausalTask(
                        new TaskCausalLog(id, 1),
                        CausalRecovery.notRecovering("source", id),
                        0,
                        1,
                        -1);
        CausalSourceReader<String, Split> reader =
                new CausalSourceReader<>(wrapped, task, StringSerializer.INSTANCE);

        reader.addSplits(List.of(new Split("p0"), new Split("p1")));
        reader.addSplits(List.of(new Split("p1"), new Split("p2")));
        reader.addSplits(List.of(new Split("p0")));
        assertThat(wrapped.added).containsExactly("p0", "p1", "p2");

        // the wrapped reader finishes p1 and releases its output
        wrapped.finishing = "p1";
        reader.pollNext(new NoOutput());
        reader.addSplits(List.of(new Split("p1"), new Split("p2")));
        assertThat(wrapped.added).containsExactly("p0", "p1", "p2", "p1");
    }

    private record Split(String splitId) implements SourceSplit {}

    /** Records what it was given; releases the split {@link #finishing} on its next poll. */
    private static final class SplitsReader implements SourceReader<String, Split> {
        final List<String> added = new ArrayList<>();
        String finishing;

        @Override
        public void start() {}

        @Override
        public InputStatus pollNext(ReaderOutput<String> output) {
            if (finishing != null) {
                output.releaseOutputForSplit(finishing);
                finishing = null;
            }
            return InputStatus.NOTHING_AVAILABLE;
        }

        @Override
        public List<Split> snapshotState(long checkpointId) {
            return List.of();
        }

        @Override
        public CompletableFuture<Void> isAvailable() {
            return new CompletableFuture<>();
        }

        @Override
        public void addSplits(List<Split> splits) {
            splits.forEach(split -> added.add(split.splitId()));
        }

        @Override
        public void notifyNoMoreSplits() {}

        @Override
        public void close() {}
    }

    private static final class NoOutput implements ReaderOutput<String> {
        @Override
        public void collect(String record) {}

        @Override
        public void collect(String record, long timestamp) {}

        @Override
        public void emitWatermark(Watermark watermark) {}

        @Override
        public void markIdle() {}

        @Override
        public void markActive() {}

        @Override
        public SourceOutput<String> createOutputForSplit(String splitId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void releaseOutputForSplit(String splitId) {}
    }
}
