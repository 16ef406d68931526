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
package io.clonos.examples;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.sink.RichSinkFunction;

import javax.annotation.Nullable;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Writes the lines it received before a checkpoint to {@code
 * <directory>/commit-<subtask>-<checkpoint>} once that checkpoint completed, like a transactional
 * sink: lines of a checkpoint that never completes are never published, and a checkpoint's file is
 * written once however often its commit is repeated after a restore, also by another subtask after
 * a change of parallelism. Read the files in checkpoint order ({@link #committedLines}).
 *
 * <p>{@link #audited} also checks the hash chains of {@link HashChainJob} where they are written:
 * once the input ended and its last checkpoint committed, a sink of parallelism 1 audits all its
 * files ({@link HashChains#audit}) and publishes the counts as the job's accumulators {@code
 * hash-chain-links}, {@code -lost}, {@code -duplicated} and {@code -diverged}, which a client reads
 * from the finished job without reaching the sink's file system (another pod, another machine). A
 * sink that restarted elsewhere cannot see the files its predecessor committed, and publishes
 * nothing.
 */
public final class CommittedLinesSink extends RichSinkFunction<String>
        implements CheckpointedFunction, CheckpointListener {

    private static final long serialVersionUID = 1L;

    /** The job's accumulators of an audit. */
    public static final String LINKS = "hash-chain-links";

    public static final String LOST = "hash-chain-lost";
    public static final String DUPLICATED = "hash-chain-duplicated";
    public static final String DIVERGED = "hash-chain-diverged";

    private final String directory;

    /** The sources and inputs per source an audit expects; null: no audit. */
    @Nullable private final String[] auditedSources;

    private final long auditedCount;

    private transient boolean inputEnded;
    private transient ListState<Tuple3<Long, Integer, List<String>>> state;
    private transient TreeMap<Long, Pending> pending;
    private transient List<String> current;

    public CommittedLinesSink(String directory) {
        this(directory, null, 0);
    }

    private CommittedLinesSink(
            String directory, @Nullable String[] auditedSources, long auditedCount) {
        this.directory = directory;
        this.auditedSources = auditedSources;
        this.auditedCount = auditedCount;
    }

    /** A sink that audits the hash chains of {@code count} inputs per source when it ends. */
    public static CommittedLinesSink audited(String directory, String[] sources, long count) {
        return new CommittedLinesSink(directory, sources, count);
    }

    @Override
    public void finish() {
        inputEnded = true;
    }

    @Override
    public void close() throws Exception {
        super.close();
        if (auditedSources == null
                || !inputEnded
                || getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks() != 1
                || !Files.isDirectory(Paths.get(directory))) {
            return;
        }
        HashChains.Audit audit =
                HashChains.audit(
                        committedLines(Paths.get(directory)), auditedSources, auditedCount);
        publish(LINKS, audit.links());
        publish(LOST, audit.lost());
        publish(DUPLICATED, audit.duplicated());
        publish(DIVERGED, audit.diverged());
    }

    private void publish(String name, long value) {
        LongCounter counter = new LongCounter();
        counter.add(value);
        getRuntimeContext().addAccumulator(name, counter);
    }

    @Override
    public void invoke(String line, Context context) {
        current.add(line);
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        pending.put(
                context.getCheckpointId(),
                new Pending(getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(), current));
        current = new ArrayList<>();
        List<Tuple3<Long, Integer, List<String>>> all = new ArrayList<>();
        pending.forEach(
                (checkpoint, lines) ->
                        all.add(Tuple3.of(checkpoint, lines.writer(), lines.lines())));
        state.update(all);
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        // one element per checkpoint and writer: at another parallelism a checkpoint's lines move
        // to one subtask whole, and keep their writer's file name
        state =
                context.getOperatorStateStore()
                        .getListState(
                                new ListStateDescriptor<>(
                                        "pending-by-writer",
                                        Types.TUPLE(
                                                Types.LONG, Types.INT, Types.LIST(Types.STRING))));
        pending = new TreeMap<>();
        current = new ArrayList<>();
        // what was pending in the restored checkpoint completed with it
        for (Tuple3<Long, Integer, List<String>> entry : state.get()) {
            commit(entry.f0, new Pending(entry.f1, entry.f2));
        }
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws IOException {
        Map<Long, Pending> done = pending.headMap(checkpointId, true);
        for (Map.Entry<Long, Pending> checkpoint : done.entrySet()) {
            commit(checkpoint.getKey(), checkpoint.getValue());
        }
        done.clear();
    }

    /** Writes {@code lines} of {@code checkpoint} once, as their writer's file of it. */
    private void commit(long checkpoint, Pending lines) throws IOException {
        Path dir = Paths.get(directory);
        Files.createDirectories(dir);
        Path file = dir.resolve("commit-" + lines.writer() + "-" + checkpoint);
        if (!Files.exists(file)) {
            Path temp =
                    dir.resolve(
                            ".tmp-" + lines.writer() + "-" + checkpoint + "-" + System.nanoTime());
            Files.write(temp, lines.lines(), StandardCharsets.UTF_8);
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
        }
    }

    /** The lines subtask {@code writer} received before a checkpoint, until it completes. */
    private record Pending(int writer, List<String> lines) {}

    /**
     * The committed lines of all subtasks in checkpoint order (a key's lines, which one subtask
     * writes per checkpoint, in their order also across a change of parallelism).
     */
    public static List<String> committedLines(Path directory) throws IOException {
        List<String> lines = new ArrayList<>();
        try (Stream<Path> files = Files.list(directory)) {
            List<Path> commits =
                    files.filter(f -> f.getFileName().toString().startsWith("commit-"))
                            .collect(Collectors.toList());
            commits.sort(
                    (a, b) -> {
                        String[] x = a.getFileName().toString().split("-");
                        String[] y = b.getFileName().toString().split("-");
                        int byCheckpoint = Long.compare(Long.parseLong(x[2]), Long.parseLong(y[2]));
                        return byCheckpoint != 0
                                ? byCheckpoint
                                : Integer.compare(Integer.parseInt(x[1]), Integer.parseInt(y[1]));
                    });
            for (Path commit : commits) {
                lines.addAll(Files.readAllLines(commit, StandardCharsets.UTF_8));
            }
        }
        return lines;
    }
}
