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

package io.clonos.examples.chaos;

import io.clonos.examples.GeneratedJob;
import io.clonos.examples.Shape;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * One chaos run, drawn from a seed: a generated job ({@link Shape}), the determinant sharing depth
 * it runs with, and the TaskManagers it loses: one to three, at once or a few seconds apart (a
 * failure during another's recovery; one loss half the time), the first at a random time after the
 * job's first completed checkpoint. The same seed draws the same plan; which TaskManagers die is
 * drawn at each kill from the ones that run the job, in the order of their names, so that a seed
 * that failed reproduces the failure on a cluster of the same size.
 */
public final class ChaosPlan {

    /** Records per second per source subtask. */
    public static final int RATE = 400;

    /** How long the job runs without failures. */
    public static final int SECONDS = 14;

    public final long seed;
    public final Shape shape;

    /** {@code clonos.determinant-sharing-depth}: 1, 2 or -1 (full). */
    public final int dsd;

    /**
     * Per kill: milliseconds after the previous one (the first: after the sources started; never
     * before the first checkpoint completed).
     */
    public final List<Long> killDelays;

    /** Whether the kills are staggered (1-5 s apart) rather than at once. */
    public final boolean staggered;

    public final long count;

    /** Splits per source subtask: 1 for Flink's data generator, more for interleaving readers. */
    public final int splitsPerSubtask;

    /** The job's checkpoint interval. */
    public final long checkpointIntervalMillis;

    private final Random victims;

    private ChaosPlan(
            long seed,
            Shape shape,
            int dsd,
            List<Long> killDelays,
            boolean staggered,
            int splitsPerSubtask,
            long checkpointIntervalMillis,
            Random victims) {
        this.seed = seed;
        this.shape = shape;
        this.dsd = dsd;
        this.killDelays = List.copyOf(killDelays);
        this.staggered = staggered;
        this.count = (long) RATE * shape.sourceParallelism * SECONDS;
        this.splitsPerSubtask = splitsPerSubtask;
        this.checkpointIntervalMillis = checkpointIntervalMillis;
        this.victims = victims;
    }

    /**
     * This plan with source readers that interleave {@code splits} splits each (as Kafka's readers
     * interleave partitions); the seed's other draws stay.
     */
    public ChaosPlan withSplitsPerSubtask(int splits) {
        if (splits < 1) {
            throw new IllegalArgumentException(
                    "Splits per subtask must be positive, not " + splits);
        }
        return new ChaosPlan(
                seed, shape, dsd, killDelays, staggered, splits, checkpointIntervalMillis, victims);
    }

    /**
     * This plan with its job's source made of two sources chained to a merging operator; the seed's
     * other draws stay.
     */
    public ChaosPlan withChainedSources() {
        if (splitsPerSubtask > 1) {
            throw new IllegalArgumentException(
                    "Chained sources read one split at a time, not " + splitsPerSubtask);
        }
        return new ChaosPlan(
                seed,
                shape.withChainedSources(),
                dsd,
                killDelays,
                staggered,
                splitsPerSubtask,
                checkpointIntervalMillis,
                victims);
    }

    /** This plan with checkpoints every {@code millis}; the seed's other draws stay. */
    public ChaosPlan withCheckpointInterval(long millis) {
        if (millis < 10) {
            throw new IllegalArgumentException(
                    "The checkpoint interval must be at least 10 ms, not " + millis);
        }
        return new ChaosPlan(
                seed, shape, dsd, killDelays, staggered, splitsPerSubtask, millis, victims);
    }

    /**
     * The plan of seed {@code seed} for a cluster of {@code taskManagers} TaskManagers with {@code
     * slots} slots each: the job's parallelism leaves room for its restarted tasks when up to three
     * TaskManagers are gone, and at least one TaskManager survives.
     */
    public static ChaosPlan of(long seed, int taskManagers, int slots) {
        Random random = new Random(seed);
        int maxKills = Math.min(3, taskManagers - 1);
        if (maxKills < 1) {
            throw new IllegalArgumentException(
                    "Chaos needs at least two TaskManagers, not " + taskManagers);
        }
        // one loss half the time, two or three otherwise: small jobs lose every task to three
        int kills = Math.min(maxKills, new int[] {1, 1, 1, 2, 2, 3}[random.nextInt(6)]);
        int maxParallelism = Math.max(1, Math.min(4, (taskManagers - kills) * slots));
        Shape shape = Shape.random(random.nextLong(), 7, maxParallelism);
        // the default, full, half the time
        int dsd = new int[] {1, 2, -1, -1}[random.nextInt(4)];
        boolean staggered = kills > 1 && random.nextBoolean();
        List<Long> delays = new ArrayList<>();
        delays.add(1_000L + random.nextInt(5_000));
        for (int i = 1; i < kills; i++) {
            delays.add(staggered ? 1_000L + random.nextInt(4_001) : 0L);
        }
        return new ChaosPlan(
                seed, shape, dsd, delays, staggered, 1, 500, new Random(random.nextLong()));
    }

    /**
     * A plan of a given job and failure: {@code kills} TaskManagers lost {@code staggerMillis}
     * apart (0: at once), the first 1-6 s after the sources started as the seed draws it.
     */
    public static ChaosPlan fixed(long seed, Shape shape, int dsd, int kills, long staggerMillis) {
        Random random = new Random(seed);
        List<Long> delays = new ArrayList<>();
        delays.add(1_000L + random.nextInt(5_000));
        for (int i = 1; i < kills; i++) {
            delays.add(staggerMillis);
        }
        return new ChaosPlan(
                seed,
                shape,
                dsd,
                delays,
                kills > 1 && staggerMillis > 0,
                1,
                500,
                new Random(random.nextLong()));
    }

    /** Picks the next TaskManager to lose among {@code candidates} (sorted by the caller). */
    public String nextVictim(List<String> candidates) {
        return candidates.get(victims.nextInt(candidates.size()));
    }

    /** How long the job runs without failures, in milliseconds. */
    public long plannedMillis() {
        return (long) SECONDS * 1000;
    }

    /** The arguments of {@link GeneratedJob#main} for this plan. */
    public List<String> jobArguments(String output) {
        List<String> arguments =
                new ArrayList<>(
                        List.of(
                                "--shape",
                                stagesOnly(),
                                "--source-parallelism",
                                String.valueOf(shape.sourceParallelism),
                                "--chain-parallelism",
                                String.valueOf(shape.chainParallelism),
                                "--count",
                                String.valueOf(count),
                                "--rate",
                                String.valueOf(RATE),
                                "--checkpoint-interval",
                                String.valueOf(checkpointIntervalMillis),
                                "--splits-per-subtask",
                                String.valueOf(splitsPerSubtask),
                                "--output",
                                output));
        if (shape.chainedSources) {
            arguments.add("--chained-sources");
        }
        return arguments;
    }

    private String stagesOnly() {
        StringBuilder stages = new StringBuilder();
        for (Shape.Stage stage : shape.stages) {
            stages.append(stages.length() == 0 ? "" : "/").append(stage);
        }
        return stages.toString();
    }

    public String dsdName() {
        return dsd < 0 ? "full" : String.valueOf(dsd);
    }

    @Override
    public String toString() {
        return "seed "
                + seed
                + ": "
                + shape
                + (splitsPerSubtask > 1
                        ? ", " + splitsPerSubtask + " interleaved splits per source subtask"
                        : "")
                + (checkpointIntervalMillis != 500
                        ? ", checkpoints every " + checkpointIntervalMillis + " ms"
                        : "")
                + ", DSD "
                + dsdName()
                + ", "
                + killDelays.size()
                + " TaskManager(s) lost "
                + (staggered ? "staggered " : "at once ")
                + "after "
                + killDelays
                + " ms";
    }
}
