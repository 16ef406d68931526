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

package io.clonos.runtime.configuration;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;

import java.time.Duration;
import java.util.List;

/**
 * Every setting of Clonos, read from the cluster's Flink configuration (config.yaml /
 * flink-conf.yaml) and, where it makes sense per job, from the job's own configuration. All keys
 * share the {@code clonos.} prefix so that {@link ClonosConfiguration} can reject unknown ones: a
 * misspelt key that is silently ignored would change the delivery guarantee without a word.
 */
@PublicEvolving
public final class ClonosOptions {

    /** The prefix of every Clonos key. */
    public static final String PREFIX = "clonos.";

    /**
     * Value of {@link #DETERMINANT_SHARING_DEPTH} that replicates determinants to every task
     * downstream.
     */
    public static final int FULL_DETERMINANT_SHARING_DEPTH = -1;

    // ------------------------------------------------------------------------------------------
    //  Causal logging
    // ------------------------------------------------------------------------------------------

    public static final ConfigOption<Integer> DETERMINANT_SHARING_DEPTH =
            ConfigOptions.key("clonos.determinant-sharing-depth")
                    .intType()
                    .defaultValue(FULL_DETERMINANT_SHARING_DEPTH)
                    .withDescription(
                            "How many hops downstream a task's determinants are replicated (DSD),"
                                    + " counted as clonos.determinant-sharing-hops says. -1 replicates them"
                                    + " along the whole graph and tolerates any number of failed tasks in a"
                                    + " row; f > 0 tolerates f in a row (f TaskManagers, with the default"
                                    + " hops) at a lower overhead; 0 turns causal logging off, which leaves"
                                    + " in-flight replay only (at-least-once). Can be set per job.");

    public static final ConfigOption<DeterminantSharingHops> DETERMINANT_SHARING_HOPS =
            ConfigOptions.key("clonos.determinant-sharing-hops")
                    .enumType(DeterminantSharingHops.class)
                    .defaultValue(DeterminantSharingHops.BETWEEN_TASKMANAGERS)
                    .withDescription(
                            "Which hops count towards the determinant sharing depth."
                                    + " between-taskmanagers counts only hops from one TaskManager to"
                                    + " another: tasks of one TaskManager fail together, so a copy of"
                                    + " determinants inside it adds nothing against the loss of the"
                                    + " TaskManager, and with DSD f a lost TaskManager (or f at once)"
                                    + " recovers locally whatever stages its slots hold. every-task"
                                    + " counts every hop, as the Clonos paper defines the depth: fewer"
                                    + " copies, and DSD f tolerates f consecutive failed tasks. Can be"
                                    + " set per job.");

    public static final ConfigOption<MemorySize> DETERMINANT_MEMORY =
            ConfigOptions.key("clonos.determinant.memory")
                    .memoryType()
                    .defaultValue(MemorySize.parse("32mb"))
                    .withDescription(
                            "Memory per task for causal logs (its own determinants and those it holds"
                                    + " for upstream tasks), freed when a checkpoint completes. When it is full"
                                    + " and a checkpoint the task took is pending, the task waits for that"
                                    + " checkpoint (backpressure). When waiting cannot help (the current epoch"
                                    + " alone outgrew it, the checkpoint was aborted), the log stops growing for"
                                    + " the rest of its epoch and ends in an overflow marker: the task keeps"
                                    + " running, and a failure that would need that epoch's log rolls the job"
                                    + " back globally. Can be set per job.");

    public static final ConfigOption<Boolean> USER_CODE_CAUSAL_CALLS =
            ConfigOptions.key("clonos.user-code.causal-calls")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Whether the classes of a job's own code (those Flink's user-code class"
                                    + " loader loads from the job's jar) have their calls of the clock"
                                    + " (System.currentTimeMillis, System.nanoTime, Instant.now,"
                                    + " LocalDateTime.now and the other now() of java.time,"
                                    + " Clock.systemUTC) and of random numbers (new Random(),"
                                    + " Math.random, ThreadLocalRandom, UUID.randomUUID) served from"
                                    + " the task's causal log, so that such a job recovers locally"
                                    + " unchanged. The classes are rewritten as they load, by a class"
                                    + " transformer attached to the TaskManager's JVM; the jar is not"
                                    + " changed. Off: such calls are the JDK's, and a recovered task"
                                    + " whose output depends on them rolls the job back globally."
                                    + " A TaskManager setting.");

    public static final ConfigOption<Duration> TIME_SERVICE_GRANULARITY =
            ConfigOptions.key("clonos.time-service.granularity")
                    .durationType()
                    .defaultValue(Duration.ofMillis(1))
                    .withDescription(
                            "The resolution of the causal time service (CausalServices#currentTimeMillis):"
                                    + " its readings are truncated to a multiple of it; 0 or 1 ms keeps"
                                    + " milliseconds. Independently of it, a task's clock ticks once per"
                                    + " element (or timer) that reads the time, and that tick is the"
                                    + " determinant.");

    // ------------------------------------------------------------------------------------------
    //  In-flight log
    // ------------------------------------------------------------------------------------------

    public static final ConfigOption<InFlightLogType> IN_FLIGHT_LOG_TYPE =
            ConfigOptions.key("clonos.in-flight-log.type")
                    .enumType(InFlightLogType.class)
                    .defaultValue(InFlightLogType.SPILLABLE)
                    .withDescription(
                            "Where a TaskManager keeps the buffers its tasks sent since the last"
                                    + " completed checkpoint: spillable (in memory, written to files"
                                    + " under Flink's io.tmp.dirs by the spill policy; never full),"
                                    + " in-memory (never written; a full log holds its producer back"
                                    + " until a checkpoint completes, letting checkpoint barriers"
                                    + " through in an overdraft of up to the TaskManager's network"
                                    + " memory; past that it overflows: it drops its epochs, and a"
                                    + " consumer that needs them is recovered by a global rollback)"
                                    + " or disabled (nothing logged: every failure"
                                    + " rolls the job back globally). A TaskManager setting: a job"
                                    + " cannot change it.");

    public static final ConfigOption<MemorySize> IN_FLIGHT_LOG_MEMORY =
            ConfigOptions.key("clonos.in-flight-log.memory")
                    .memoryType()
                    .defaultValue(MemorySize.parse("64mb"))
                    .withDescription(
                            "Heap memory of a TaskManager for the in-flight logs of all its output"
                                    + " subpartitions, on top of what Flink's taskmanager.memory"
                                    + " settings size: bin/clonos cluster start grows the"
                                    + " TaskManager's heap by it (for in-memory logs by their"
                                    + " overdraft too). When it is used up, a spillable log writes to"
                                    + " disk and an in-memory log holds its producer back."
                                    + " It also bounds how far a producer runs ahead, in its log,"
                                    + " of a consumer that still reads a replay (a replacement"
                                    + " that lags): past it, Flink's queue holds the producer"
                                    + " back again. A TaskManager setting: a job cannot change"
                                    + " it.");

    public static final ConfigOption<SpillPolicy> IN_FLIGHT_LOG_SPILL_POLICY =
            ConfigOptions.key("clonos.in-flight-log.spill-policy")
                    .enumType(SpillPolicy.class)
                    .defaultValue(SpillPolicy.AVAILABILITY)
                    .withDescription(
                            "When a spillable in-flight log writes buffers to disk: eager (every"
                                    + " buffer as it is logged, none kept in memory), epoch (an epoch"
                                    + " once the next one starts, i.e. once its closing barrier"
                                    + " passed) or availability (everything a log holds, when the"
                                    + " free fraction of the TaskManager's log memory drops below the"
                                    + " spill trigger). Under every policy a buffer that does not fit"
                                    + " in the log memory goes to disk. A TaskManager setting.");

    public static final ConfigOption<Double> IN_FLIGHT_LOG_SPILL_TRIGGER =
            ConfigOptions.key("clonos.in-flight-log.spill-trigger")
                    .doubleType()
                    .defaultValue(0.3)
                    .withDescription(
                            "With the availability policy: the free fraction of in-flight log memory"
                                    + " below which a log spills everything it holds. Between 0"
                                    + " (exclusive) and 1 (inclusive). A TaskManager setting.");

    public static final ConfigOption<Integer> IN_FLIGHT_LOG_PREFETCH_BUFFERS =
            ConfigOptions.key("clonos.in-flight-log.prefetch-buffers")
                    .intType()
                    .defaultValue(32)
                    .withDescription(
                            "How many spilled buffers a replay reads from disk at a time (one read"
                                    + " of consecutive buffers). At least 1. A TaskManager setting.");

    // ------------------------------------------------------------------------------------------
    //  Recovery
    // ------------------------------------------------------------------------------------------

    public static final ConfigOption<RecoveryMode> RECOVERY_MODE =
            ConfigOptions.key("clonos.recovery.mode")
                    .enumType(RecoveryMode.class)
                    .defaultValue(RecoveryMode.LOCAL)
                    .withDescription(
                            "How a failed task is recovered: local (only the failed tasks are"
                                    + " recovered, everything else keeps running) or global (Flink's own"
                                    + " restart of the whole job from the last checkpoint, for"
                                    + " side-by-side comparisons).");

    public static final ConfigOption<OrphanFallback> RECOVERY_ORPHAN_FALLBACK =
            ConfigOptions.key("clonos.recovery.orphan-fallback")
                    .enumType(OrphanFallback.class)
                    .defaultValue(OrphanFallback.GLOBAL_ROLLBACK)
                    .withDescription(
                            "What happens when more consecutive tasks fail than the determinant"
                                    + " sharing depth covers, so that determinants are lost: global-rollback"
                                    + " (Flink's restart of the whole job from the last checkpoint,"
                                    + " exactly-once) or at-least-once (local recovery without the lost"
                                    + " determinants).");

    public static final ConfigOption<String> RECOVERY_RESTART_DELAY =
            ConfigOptions.key("clonos.recovery.restart-delay")
                    .stringType()
                    .defaultValue(LocalRestartDelay.IMMEDIATE_UNLESS_REPEATED)
                    .withDescription(
                            "How long the JobManager waits before it recovers failed tasks locally:"
                                    + " immediate-unless-repeated (no wait, unless a task fails again"
                                    + " before a checkpoint completed since its last local recovery: then"
                                    + " as Flink's restart strategy says, so that a crash loop backs off),"
                                    + " restart-strategy (always as Flink's restart strategy says,"
                                    + " restart-strategy.*, e.g. exponential delay from 1 s, as a global"
                                    + " restart does) or a duration (0 ms for a standby's immediate"
                                    + " takeover). The restart strategy still decides whether a task may"
                                    + " restart at all (attempts, failure rate), and global rollbacks keep"
                                    + " its delay; with a duration, a task that fails again at once (a"
                                    + " deterministic crash) restarts without backing off until the"
                                    + " strategy refuses.");

    public static final ConfigOption<Duration> RECOVERY_RECONNECT_TIMEOUT =
            ConfigOptions.key("clonos.recovery.reconnect-timeout")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(20))
                    .withDescription(
                            "The last resort for a peer that never answers: how long a running task"
                                    + " waits for the new attempt of a producer that died before it"
                                    + " gives up and fails (its own restart reconnects it to every"
                                    + " producer), and how long a recovering task waits for its"
                                    + " consumers' determinants or lets its replay make no progress"
                                    + " before the job rolls back globally. It must exceed the time the"
                                    + " JobManager takes to notice a lost TaskManager (heartbeat.timeout)"
                                    + " and redeploy its tasks. A TaskManager setting: a job cannot"
                                    + " change it.");

    public static final ConfigOption<Duration> RECOVERY_CHECKPOINT_PAUSE =
            ConfigOptions.key("clonos.recovery.checkpoint-pause")
                    .durationType()
                    .defaultValue(Duration.ZERO)
                    .withDescription(
                            "The longest time the JobManager holds periodic checkpoints back while"
                                    + " locally restarted tasks replay their predecessors' determinants;"
                                    + " 0 ms (the default) never holds them back. A checkpoint triggered"
                                    + " during a replay reaches the surviving tasks at once but the"
                                    + " replaying ones only after their replay, so the survivors' aligned"
                                    + " barriers can stall them meanwhile. With a pause, checkpoints resume"
                                    + " as soon as the last restarted task reports its replay's end, at"
                                    + " the latest after this time, with one checkpoint at once; the epochs"
                                    + " grow meanwhile. Off by default: it did not shorten the survivors'"
                                    + " stalls in the measured staggered failures, and held until the"
                                    + " restarted tasks had also caught up with their input it made Q3's"
                                    + " recovery longer (docs/experiments-archive.md).");

    // ------------------------------------------------------------------------------------------
    //  Standby tasks
    // ------------------------------------------------------------------------------------------

    public static final ConfigOption<Boolean> STANDBY_ENABLED =
            ConfigOptions.key("clonos.standby.enabled")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Whether every running task gets idle standby replicas that load each"
                                    + " completed checkpoint, so that a failed task is replaced without"
                                    + " waiting for a slot, a deployment or a state download.");

    public static final ConfigOption<Integer> STANDBY_COUNT =
            ConfigOptions.key("clonos.standby.count")
                    .intType()
                    .defaultValue(1)
                    .withDescription("How many standby tasks each running task gets. At least 1.");

    public static final ConfigOption<StandbyPlacement> STANDBY_PLACEMENT =
            ConfigOptions.key("clonos.standby.placement")
                    .enumType(StandbyPlacement.class)
                    .defaultValue(StandbyPlacement.SPREAD)
                    .withDescription(
                            "Where standby tasks run: spread (never on their primary's"
                                    + " TaskManager, so one TaskManager's loss never takes both) or pack"
                                    + " (may share it: fewer TaskManagers, less safety).");

    public static final ConfigOption<Duration> STANDBY_TRANSFER_WAIT =
            ConfigOptions.key("clonos.standby.transfer-wait")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(2))
                    .withDescription(
                            "How long a failed task's replacement waits for its standby to finish"
                                    + " fetching the latest completed checkpoint, when the failure comes"
                                    + " while it fetches. Past it, the replacement reads what the standby"
                                    + " does not hold yet from checkpoint storage. 0 ms does not wait.");

    public static final ConfigOption<Duration> STANDBY_REDEPLOY_DELAY =
            ConfigOptions.key("clonos.standby.redeploy-delay")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(1))
                    .withDescription(
                            "How long after the replacements of a local recovery run the standbys"
                                    + " whose slots they took are deployed again. A new standby"
                                    + " fetches its primary's whole latest checkpoint from checkpoint"
                                    + " storage, which competes with the recovered tasks' catch-up for"
                                    + " CPU, disk and network; until it holds that checkpoint, another"
                                    + " failure of the task restores from checkpoint storage (still"
                                    + " locally).");

    // ------------------------------------------------------------------------------------------
    //  Output
    // ------------------------------------------------------------------------------------------

    public static final ConfigOption<KafkaSinkExactlyOnce> KAFKA_SINK_EXACTLY_ONCE =
            ConfigOptions.key("clonos.kafka-sink.exactly-once")
                    .enumType(KafkaSinkExactlyOnce.class)
                    .defaultValue(KafkaSinkExactlyOnce.TWO_PHASE_COMMIT)
                    .withDescription(
                            "What serves a job's Flink KafkaSink with DeliveryGuarantee.EXACTLY_ONCE:"
                                    + " two-phase-commit (Flink's sink: records become visible to"
                                    + " read_committed consumers when the next checkpoint completes) or"
                                    + " clonos (replaced at submission by the Clonos Kafka sink, which"
                                    + " publishes at once without transactions and stores the"
                                    + " determinants with the output; needs clonos-connector-kafka"
                                    + " where the job's Kafka connector loads and causal logging on). A"
                                    + " sink that cannot be served so keeps Flink's, and the submission"
                                    + " logs why.");

    // ------------------------------------------------------------------------------------------
    //  Experiments
    // ------------------------------------------------------------------------------------------

    public static final ConfigOption<Boolean> FAULT_INJECTION_ENABLED =
            ConfigOptions.key("clonos.fault-injection.enabled")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Whether a running task of the job may be failed on request (bin/clonos"
                                    + " fail, the coordination request FailTaskRequest over Flink's"
                                    + " REST API), for failure experiments. Off by default: anyone"
                                    + " who reaches the REST endpoint could fail any task.");

    /**
     * The options a TaskManager reads when it starts (its in-flight logs serve every job's tasks),
     * which a job therefore cannot change.
     */
    public static List<ConfigOption<?>> taskManagerOnly() {
        return List.of(
                USER_CODE_CAUSAL_CALLS,
                IN_FLIGHT_LOG_TYPE,
                IN_FLIGHT_LOG_MEMORY,
                IN_FLIGHT_LOG_SPILL_POLICY,
                IN_FLIGHT_LOG_SPILL_TRIGGER,
                IN_FLIGHT_LOG_PREFETCH_BUFFERS,
                RECOVERY_RECONNECT_TIMEOUT);
    }

    /** Every option above, for validation and for the generated configuration reference. */
    public static List<ConfigOption<?>> all() {
        return List.of(
                DETERMINANT_SHARING_DEPTH,
                DETERMINANT_SHARING_HOPS,
                DETERMINANT_MEMORY,
                USER_CODE_CAUSAL_CALLS,
                TIME_SERVICE_GRANULARITY,
                IN_FLIGHT_LOG_TYPE,
                IN_FLIGHT_LOG_MEMORY,
                IN_FLIGHT_LOG_SPILL_POLICY,
                IN_FLIGHT_LOG_SPILL_TRIGGER,
                IN_FLIGHT_LOG_PREFETCH_BUFFERS,
                RECOVERY_MODE,
                RECOVERY_ORPHAN_FALLBACK,
                RECOVERY_RESTART_DELAY,
                RECOVERY_RECONNECT_TIMEOUT,
                RECOVERY_CHECKPOINT_PAUSE,
                STANDBY_ENABLED,
                STANDBY_COUNT,
                STANDBY_PLACEMENT,
                STANDBY_TRANSFER_WAIT,
                STANDBY_REDEPLOY_DELAY,
                KAFKA_SINK_EXACTLY_ONCE,
                FAULT_INJECTION_ENABLED);
    }

    // ------------------------------------------------------------------------------------------
    //  Enumerated values, spelt in the configuration as their lower-case, dash-separated names.
    // ------------------------------------------------------------------------------------------

    /** Which hops count towards the determinant sharing depth. */
    @PublicEvolving
    public enum DeterminantSharingHops {
        /** Only hops from one TaskManager to another; hops inside a TaskManager are free. */
        BETWEEN_TASKMANAGERS,
        /** Every hop from a task to its consumer, as the Clonos paper counts. */
        EVERY_TASK;

        @Override
        public String toString() {
            return ConfigValues.spelling(this);
        }
    }

    /** How a failed task is recovered. */
    @PublicEvolving
    public enum RecoveryMode {
        /** Only the failed tasks are recovered; everything else keeps running. */
        LOCAL,
        /** Flink's own restart of the whole job from the last checkpoint. */
        GLOBAL;

        @Override
        public String toString() {
            return ConfigValues.spelling(this);
        }
    }

    /** What to do when determinants were lost with more failed tasks than the DSD covers. */
    @PublicEvolving
    public enum OrphanFallback {
        /** Flink's restart of the whole job from the last checkpoint: exactly-once. */
        GLOBAL_ROLLBACK,
        /** Local recovery without the lost determinants: faster, records may be seen twice. */
        AT_LEAST_ONCE;

        @Override
        public String toString() {
            return ConfigValues.spelling(this);
        }
    }

    /** Where the in-flight log keeps its buffers. */
    @PublicEvolving
    public enum InFlightLogType {
        /** In memory, spilled to local disk according to the spill policy. */
        SPILLABLE,
        /** In memory only; a full log holds its producer back until a checkpoint frees it. */
        IN_MEMORY,
        /** Nothing is logged: every failure rolls the job back globally. */
        DISABLED;

        @Override
        public String toString() {
            return ConfigValues.spelling(this);
        }
    }

    /** When a spillable in-flight log writes to disk. */
    @PublicEvolving
    public enum SpillPolicy {
        /** Every buffer is written to disk as it is logged. */
        EAGER,
        /** An epoch is written to disk once the next epoch starts. */
        EPOCH,
        /** Everything is spilled when the free fraction of log memory drops below the trigger. */
        AVAILABILITY;

        @Override
        public String toString() {
            return ConfigValues.spelling(this);
        }
    }

    /** Where standby tasks are placed. */
    @PublicEvolving
    public enum StandbyPlacement {
        /** A standby never shares a TaskManager with its primary. */
        SPREAD,
        /**
         * Standbys may share TaskManagers with their primaries: fewer TaskManagers, less safety.
         */
        PACK;

        @Override
        public String toString() {
            return ConfigValues.spelling(this);
        }
    }

    /** What serves a Flink {@code KafkaSink} with {@code DeliveryGuarantee.EXACTLY_ONCE}. */
    @PublicEvolving
    public enum KafkaSinkExactlyOnce {
        /** Flink's sink, committing a transaction per checkpoint. */
        TWO_PHASE_COMMIT,
        /** The Clonos Kafka sink, publishing at once with the determinants beside the output. */
        CLONOS;

        @Override
        public String toString() {
            return ConfigValues.spelling(this);
        }
    }

    private ClonosOptions() {}
}
