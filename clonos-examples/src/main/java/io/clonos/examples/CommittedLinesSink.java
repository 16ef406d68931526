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
import org.apache.flink.api.java.tuple.Tuple2;
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
 * written once however often its commit is repeated after a restore. Read the files of a subtask in
 * checkpoint order ({@link #committedLines}).
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
    private transient ListState<Tuple2<Long, String>> state;
    private transient TreeMap<Long, List<String>> pending;
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
        pending.put(context.getCheckpointId(), current);
        current = new ArrayList<>();
        List<Tuple2<Long, String>> all = new ArrayList<>();
        pending.forEach(
                (checkpoint, lines) -> lines.forEach(line -> all.add(Tuple2.of(checkpoint, line))));
        state.update(all);
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        state =
                context.getOperatorStateStore()
                        .getListState(
                                new ListStateDescriptor<>(
                                        "pending", Types.TUPLE(Types.LONG, Types.STRING)));
        pending = new TreeMap<>();
        current = new ArrayList<>();
        for (Tuple2<Long, String> entry : state.get()) {
            pending.computeIfAbsent(entry.f0, c -> new ArrayList<>()).add(entry.f1);
        }
        // what was pending in the restored checkpoint completed with it
        if (!pending.isEmpty()) {
            notifyCheckpointComplete(pending.lastKey());
        }
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws IOException {
        Map<Long, List<String>> done = pending.headMap(checkpointId, true);
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        Path dir = Paths.get(directory);
        Files.createDirectories(dir);
        for (Map.Entry<Long, List<String>> checkpoint : done.entrySet()) {
            Path file = dir.resolve("commit-" + subtask + "-" + checkpoint.getKey());
            if (!Files.exists(file)) {
                Path temp =
                        dir.resolve(
                                ".tmp-"
                                        + subtask
                                        + "-"
                                        + checkpoint.getKey()
                                        + "-"
                                        + System.nanoTime());
                Files.write(temp, checkpoint.getValue(), StandardCharsets.UTF_8);
                Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
            }
        }
        done.clear();
    }

    /** The committed lines of all subtasks, each subtask's in checkpoint order. */
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
                        int bySubtask =
                                Integer.compare(Integer.parseInt(x[1]), Integer.parseInt(y[1]));
                        return bySubtask != 0
                                ? bySubtask
                                : Long.compare(Long.parseLong(x[2]), Long.parseLong(y[2]));
                    });
            for (Path commit : commits) {
                lines.addAll(Files.readAllLines(commit, StandardCharsets.UTF_8));
            }
        }
        return lines;
    }
}
