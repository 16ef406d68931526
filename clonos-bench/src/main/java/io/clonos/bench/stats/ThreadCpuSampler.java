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

package io.clonos.bench.stats;

import org.apache.flink.annotation.Internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The CPU time of this JVM's threads, by group (each task's subtasks, the JIT compilers, the
 * garbage collector, Netty), over the benchmark's steady state only. The process's CPU counter
 * covers the whole run, start-up and warm-up included, and cannot say whether the extra CPU of a
 * system goes to its tasks or to compiling its code; on two cores the two compete.
 *
 * <p>Reads {@code /proc/self/task/<tid>/stat} (Linux; elsewhere it samples nothing) every {@link
 * #PERIOD_MILLIS}, so a thread that ended keeps the CPU it had at its last sample. Resolution: the
 * kernel's clock tick (10 ms), against tens of seconds of CPU per group.
 */
@Internal
public final class ThreadCpuSampler implements AutoCloseable {

    static final long PERIOD_MILLIS = 500;

    private static final Path TASKS = Paths.get("/proc/self/task");

    /** Flink names a task's thread "name (subtask/parallelism)#attempt". */
    private static final Pattern TASK_THREAD = Pattern.compile("^(.+?) \\(\\d");

    /** The threads of the JVM and of Flink's runtime worth a group: a name's prefix, the group. */
    private static final List<Map.Entry<String, String>> JVM_AND_FLINK_THREADS =
            List.of(
                    Map.entry("C2 Compiler", "JIT C2"),
                    Map.entry("C1 Compiler", "JIT C1"),
                    Map.entry("GC Thread", "GC"),
                    Map.entry("G1 ", "GC"),
                    Map.entry("Flink Netty", "Netty"),
                    Map.entry("OutputFlusher", "output flushers"),
                    Map.entry("System Time Tri", "timer threads"),
                    Map.entry("Time Trigger", "timer threads"),
                    Map.entry("AsyncOperations", "checkpoints (async)"));

    /** The kernel's clock ticks per second, in which /proc reports CPU time. */
    private static final long TICKS_PER_SECOND = 100;

    /** One sample: when, and each thread's group and CPU ticks so far. */
    private record Sample(long millis, Map<Integer, Long> ticks) {}

    private final List<Sample> samples = new ArrayList<>();
    private final Map<Integer, String> groups = new HashMap<>();
    private final Thread sampling;
    private volatile boolean running = true;

    private ThreadCpuSampler() {
        sampling = new Thread(this::sampleUntilClosed, "clonos-thread-cpu-sampler");
        sampling.setDaemon(true);
    }

    public static ThreadCpuSampler start() {
        ThreadCpuSampler sampler = new ThreadCpuSampler();
        sampler.sampling.start();
        return sampler;
    }

    private void sampleUntilClosed() {
        while (running) {
            sample();
            try {
                Thread.sleep(PERIOD_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void sample() {
        if (!Files.isDirectory(TASKS)) {
            return;
        }
        Map<Integer, Long> ticks = new HashMap<>();
        Map<Integer, String> named = new HashMap<>();
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(TASKS)) {
            for (Path thread : threads) {
                String stat;
                try {
                    stat = Files.readString(thread.resolve("stat"), StandardCharsets.UTF_8);
                } catch (IOException ended) {
                    continue;
                }
                // "tid (comm) state ..."; comm may hold spaces and parentheses
                int open = stat.indexOf('(');
                int close = stat.lastIndexOf(')');
                String[] fields = stat.substring(close + 2).split(" ");
                // after the comm: state is field 3 of the line, utime 14 and stime 15
                long cpu = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
                int tid = Integer.parseInt(stat.substring(0, open).trim());
                ticks.put(tid, cpu);
                named.put(tid, groupOf(stat.substring(open + 1, close)));
            }
        } catch (IOException | RuntimeException e) {
            return;
        }
        synchronized (this) {
            samples.add(new Sample(System.currentTimeMillis(), ticks));
            groups.putAll(named);
        }
    }

    /** The group of a thread, by its name as the kernel knows it (at most 15 characters). */
    static String groupOf(String comm) {
        Matcher task = TASK_THREAD.matcher(comm);
        if (task.find()) {
            return "task " + task.group(1);
        }
        if (comm.startsWith("Source: ")) {
            // a source task's name, cut before its subtask
            return "task " + comm.trim();
        }
        for (Map.Entry<String, String> prefixAndGroup : JVM_AND_FLINK_THREADS) {
            if (comm.startsWith(prefixAndGroup.getKey())) {
                return prefixAndGroup.getValue();
            }
        }
        return "other";
    }

    /** What the threads used in a window of {@code millis} between two samples. */
    public record Window(long millis, Map<String, Long> cpuNanosByGroup) {

        /**
         * Each group's CPU per element, for elements that passed at {@code elementsPerSecond}: the
         * window is the samples' around a benchmark's steady state, so its elements are scaled to
         * the window's length.
         */
        public Map<String, Double> nanosPerElement(double elementsPerSecond) {
            double elements = Math.max(1, elementsPerSecond * millis / 1000.0);
            Map<String, Double> perElement = new TreeMap<>();
            cpuNanosByGroup.forEach((group, nanos) -> perElement.put(group, nanos / elements));
            return perElement;
        }
    }

    /**
     * CPU per group between the last sample at or before {@code fromMillis} and the first at or
     * after {@code toMillis} (the nearest ones where none is).
     */
    public synchronized Window between(long fromMillis, long toMillis) {
        Map<String, Long> byGroup = new TreeMap<>();
        if (samples.size() < 2) {
            return new Window(0, byGroup);
        }
        int from = 0;
        while (from + 1 < samples.size() && samples.get(from + 1).millis() <= fromMillis) {
            from++;
        }
        int to = samples.size() - 1;
        while (to - 1 > from && samples.get(to - 1).millis() >= toMillis) {
            to--;
        }
        Map<Integer, Long> start = samples.get(from).ticks();
        // a thread's CPU at the window's end: its last sample up to there (it may have ended)
        Map<Integer, Long> end = new HashMap<>();
        for (int i = from; i <= to; i++) {
            end.putAll(samples.get(i).ticks());
        }
        end.forEach(
                (tid, ticks) -> {
                    long used = ticks - start.getOrDefault(tid, 0L);
                    byGroup.merge(
                            groups.getOrDefault(tid, "other"),
                            used * (1_000_000_000L / TICKS_PER_SECOND),
                            Long::sum);
                });
        return new Window(samples.get(to).millis() - samples.get(from).millis(), byGroup);
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        sampling.interrupt();
        sampling.join();
        sample();
    }
}
