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

package io.clonos.bench.experiment;

import io.clonos.bench.probe.ProbeRecords;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.common.typeutils.base.VoidSerializer;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.streaming.api.functions.sink.TwoPhaseCommitSinkFunction;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The synthetic job's sink: writes when each element arrived, exactly once. Each transaction (one
 * per checkpoint, Flink's two-phase commit) writes a file of its own under a pending name, which
 * the commit moves to the name the benchmark reads; a transaction that no completed checkpoint
 * covers (a lost attempt's output since its last checkpoint) is aborted and its file deleted. The
 * benchmark so counts what a transactional sink would show its readers, on both systems, while the
 * arrival times are those of the records' first write, not of their commit (which adds up to a
 * checkpoint interval on both).
 */
@Internal
final class CommittingSink
        extends TwoPhaseCommitSinkFunction<Tuple3<Long, Long, Long>, String, Void> {

    private static final String PENDING = "pending-";

    private final String probes;
    private final String kind;
    private transient String open;
    private transient ProbeRecords.Writer writer;

    CommittingSink(String probes, String kind) {
        super(StringSerializer.INSTANCE, VoidSerializer.INSTANCE);
        this.probes = probes;
        this.kind = kind;
    }

    @Override
    protected String beginTransaction() throws IOException {
        Path committed = ProbeRecords.file(probes, kind);
        return committed.resolveSibling(PENDING + committed.getFileName()).toString();
    }

    @Override
    protected void invoke(String transaction, Tuple3<Long, Long, Long> event, Context context)
            throws IOException {
        if (!transaction.equals(open)) {
            closeWriter();
            writer = ProbeRecords.open(Path.of(transaction), 4);
            open = transaction;
        }
        writer.write(event.f0, event.f1, event.f2, System.currentTimeMillis());
    }

    @Override
    protected void preCommit(String transaction) throws IOException {
        if (transaction.equals(open)) {
            closeWriter();
        }
    }

    @Override
    protected void commit(String transaction) {
        Path pending = Path.of(transaction);
        Path committed =
                pending.resolveSibling(
                        pending.getFileName().toString().substring(PENDING.length()));
        try {
            // a transaction without records has no file; one committed again (after a restore
            // from the checkpoint whose notification committed it) has moved already
            if (Files.exists(pending)) {
                Files.move(pending, committed, StandardCopyOption.ATOMIC_MOVE);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected void abort(String transaction) {
        try {
            if (transaction.equals(open)) {
                closeWriter();
            }
            Files.deleteIfExists(Path.of(transaction));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void closeWriter() throws IOException {
        if (writer != null) {
            writer.close();
            writer = null;
            open = null;
        }
    }
}
