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

package io.clonos.nexmark.failure;

import io.clonos.bench.report.FailurePlan;

import org.apache.flink.annotation.Internal;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The failure experiment's knobs ({@code bin/clonos nexmark failure}). */
@Internal
public final class FailureSettings {
    public FailureQuery query = FailureQuery.Q3;
    public int rate = 10_000;
    public int seconds = 60;
    public int killAfterSeconds = 30;
    public int parallelism = 2;

    /** As in the paper's failure experiments. */
    public long checkpointIntervalMs = 5_000;

    /**
     * The input topic's partitions per source subtask: with more than one, each reader interleaves
     * several partitions as its fetcher delivers them, which Clonos logs.
     */
    public int partitionsPerSubtask = 4;

    /** Q8's window. */
    public long windowSeconds = 10;

    /**
     * The synthetic job's state per stateful subtask, in MB (Q3 and Q8 are sized by their events:
     * {@link #eventSizes}).
     */
    public int syntheticStateMb = 10;

    /**
     * A file system URI for the checkpoints, each run in a directory of its own under it; null for
     * a temporary directory.
     */
    public String checkpointDir;

    /** An external broker; null for one in this JVM. */
    public String bootstrapServers;

    /**
     * Which TaskManagers are lost and when: the one of the lost operator's first subtask, or those
     * of its first three at once or 5 s apart.
     */
    public FailurePlan failures = FailurePlan.ONE;

    /** Clonos with one standby per task (the paper's setting). */
    public boolean standby = true;

    /**
     * Where the clusters run ({@link FailureClusters#named}): embedded in this JVM, or separate
     * processes (a TaskManager killed with SIGKILL).
     */
    public String processes = EmbeddedFailureClusters.NAME;

    /** How often each system runs; the order of the systems alternates between repetitions. */
    public int repetitions = 1;

    /**
     * The input rate as a fraction of the capacity a first, unthrottled run measures (the paper's
     * setting: a job with headroom, not one at its limit); 0 to publish at {@link #rate}.
     */
    public double load = 0.75;

    /**
     * The persons' and auctions' average sizes (Nexmark's): the queries keep them in state, so
     * these size it.
     */
    public EventPublisher.EventSizes eventSizes = EventPublisher.EventSizes.NEXMARK;

    /**
     * The latency level before the failure is that of the results of this many seconds before it; 0
     * for two thirds of {@link #killAfterSeconds} (the first third is the job's start-up).
     */
    public int baselineSeconds;

    /** The window of the latency level before the failure, in milliseconds. */
    long baselineMs() {
        return baselineSeconds > 0
                ? baselineSeconds * 1000L
                : TimeUnit.SECONDS.toMillis(killAfterSeconds) * 2 / 3;
    }

    /**
     * Every this many milliseconds, each subtask's watermarks and record counts are sampled through
     * the REST API into {@code <query>-progress-<run>.csv}; 0 samples nothing.
     */
    public long progressIntervalMs;

    /** How many events the capacity run reads. */
    public long capacityEvents = 2_000_000;

    /** Flink and Clonos settings for every cluster of the run ({@code -D key=value}). */
    public final Map<String, String> properties = new LinkedHashMap<>();

    public Path output = Path.of("bench-results", "nexmark-failure");

    long events() {
        return (long) rate * seconds;
    }

    int inputPartitions() {
        return parallelism * partitionsPerSubtask;
    }
}
