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

import io.clonos.runtime.configuration.ClonosOptions.DeterminantSharingHops;
import io.clonos.runtime.configuration.ClonosOptions.InFlightLogType;
import io.clonos.runtime.configuration.ClonosOptions.KafkaSinkExactlyOnce;
import io.clonos.runtime.configuration.ClonosOptions.OrphanFallback;
import io.clonos.runtime.configuration.ClonosOptions.RecoveryMode;
import io.clonos.runtime.configuration.ClonosOptions.SpillPolicy;
import io.clonos.runtime.configuration.ClonosOptions.StandbyPlacement;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.util.TimeUtils;

import java.io.Serializable;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * The validated Clonos settings of a cluster or of one job. Everything that starts Clonos (the
 * cluster entrypoint, the TaskManager runner, the shuffle service, job submission) builds one, so a
 * bad value stops start-up with a message that names the key, the value and what is allowed,
 * instead of surfacing later as a task failure or, worse, as a weaker delivery guarantee.
 */
@Internal
public final class ClonosConfiguration implements Serializable {

    private static final long serialVersionUID = 1L;

    private static final Set<String> KNOWN_KEYS =
            ClonosOptions.all().stream()
                    .map(ConfigOption::key)
                    .collect(Collectors.toUnmodifiableSet());

    private final int determinantSharingDepth;
    private final DeterminantSharingHops determinantSharingHops;
    private final MemorySize determinantMemory;
    private final Duration timeServiceGranularity;
    private final InFlightLogType inFlightLogType;
    private final MemorySize inFlightLogMemory;
    private final SpillPolicy spillPolicy;
    private final double spillTrigger;
    private final int prefetchBuffers;
    private final RecoveryMode recoveryMode;
    private final OrphanFallback orphanFallback;

    /** How long a local recovery waits ({@code clonos.recovery.restart-delay}). */
    private final LocalRestartDelay restartDelay;

    private final Duration reconnectTimeout;
    private final Duration checkpointPause;
    private final boolean standbyEnabled;
    private final int standbyCount;
    private final StandbyPlacement standbyPlacement;
    private final Duration standbyTransferWait;
    private final Duration standbyRedeployDelay;
    private final boolean failOnRequest;
    private final boolean userCodeCausalCalls;
    private final KafkaSinkExactlyOnce kafkaSinkExactlyOnce;

    private ClonosConfiguration(Configuration config) {
        rejectUnknownKeys(config);
        determinantSharingDepth =
                read(
                        config,
                        ClonosOptions.DETERMINANT_SHARING_DEPTH,
                        dsd -> dsd >= ClonosOptions.FULL_DETERMINANT_SHARING_DEPTH,
                        "-1 (full depth), 0 (causal logging off) or a positive depth");
        determinantSharingHops =
                readEnum(
                        config,
                        ClonosOptions.DETERMINANT_SHARING_HOPS,
                        DeterminantSharingHops.class);
        determinantMemory =
                read(
                        config,
                        ClonosOptions.DETERMINANT_MEMORY,
                        ClonosConfiguration::positive,
                        "a positive memory size such as 32mb");
        timeServiceGranularity =
                read(
                        config,
                        ClonosOptions.TIME_SERVICE_GRANULARITY,
                        d -> !d.isNegative(),
                        "a duration of 0 or more, such as 1 ms");
        inFlightLogType = readEnum(config, ClonosOptions.IN_FLIGHT_LOG_TYPE, InFlightLogType.class);
        inFlightLogMemory =
                read(
                        config,
                        ClonosOptions.IN_FLIGHT_LOG_MEMORY,
                        ClonosConfiguration::positive,
                        "a positive memory size such as 64mb");
        spillPolicy = readEnum(config, ClonosOptions.IN_FLIGHT_LOG_SPILL_POLICY, SpillPolicy.class);
        spillTrigger =
                read(
                        config,
                        ClonosOptions.IN_FLIGHT_LOG_SPILL_TRIGGER,
                        t -> t > 0.0 && t <= 1.0,
                        "a fraction greater than 0 and at most 1");
        prefetchBuffers =
                read(
                        config,
                        ClonosOptions.IN_FLIGHT_LOG_PREFETCH_BUFFERS,
                        n -> n >= 1,
                        "an integer of at least 1");
        recoveryMode = readEnum(config, ClonosOptions.RECOVERY_MODE, RecoveryMode.class);
        orphanFallback =
                readEnum(config, ClonosOptions.RECOVERY_ORPHAN_FALLBACK, OrphanFallback.class);
        restartDelay = readRestartDelay(config);
        reconnectTimeout =
                read(
                        config,
                        ClonosOptions.RECOVERY_RECONNECT_TIMEOUT,
                        d -> !d.isNegative() && !d.isZero(),
                        "a positive duration such as 60 s");
        checkpointPause =
                read(
                        config,
                        ClonosOptions.RECOVERY_CHECKPOINT_PAUSE,
                        d -> !d.isNegative(),
                        "a duration of 0 ms or more such as 1 min");
        standbyEnabled = read(config, ClonosOptions.STANDBY_ENABLED, b -> true, "true or false");
        userCodeCausalCalls =
                read(config, ClonosOptions.USER_CODE_CAUSAL_CALLS, b -> true, "true or false");
        standbyCount =
                read(config, ClonosOptions.STANDBY_COUNT, n -> n >= 1, "an integer of at least 1");
        standbyPlacement =
                readEnum(config, ClonosOptions.STANDBY_PLACEMENT, StandbyPlacement.class);
        standbyTransferWait =
                read(
                        config,
                        ClonosOptions.STANDBY_TRANSFER_WAIT,
                        d -> !d.isNegative(),
                        "a duration of 0 ms or more such as 2 s");
        standbyRedeployDelay =
                read(
                        config,
                        ClonosOptions.STANDBY_REDEPLOY_DELAY,
                        d -> !d.isNegative(),
                        "a duration of 0 ms or more such as 1 s");
        failOnRequest =
                read(config, ClonosOptions.FAULT_INJECTION_ENABLED, b -> true, "true or false");
        kafkaSinkExactlyOnce =
                readEnum(config, ClonosOptions.KAFKA_SINK_EXACTLY_ONCE, KafkaSinkExactlyOnce.class);
    }

    /**
     * Validates the {@code clonos.} keys of a configuration.
     *
     * @throws IllegalConfigurationException naming the first offending key, its value and what is
     *     allowed
     */
    public static ClonosConfiguration fromConfiguration(Configuration config) {
        return new ClonosConfiguration(config);
    }

    /**
     * The settings of one job: the cluster's, overridden by any {@code clonos.} key in the job's
     * own configuration.
     */
    public static ClonosConfiguration forJob(Configuration cluster, Configuration job) {
        Configuration merged = new Configuration(cluster);
        merged.addAll(job);
        ClonosConfiguration settings = new ClonosConfiguration(merged);
        for (ConfigOption<?> option : ClonosOptions.taskManagerOnly()) {
            if (job.containsKey(option.key())
                    && !Objects.equals(merged.get(option), cluster.get(option))) {
                throw new IllegalConfigurationException(
                        String.format(
                                "Invalid value '%s' for configuration key '%s' in the job: it is a"
                                        + " TaskManager setting, which a job cannot change (the"
                                        + " cluster has '%s'); set it in the cluster's configuration.",
                                job.toMap().get(option.key()), option.key(), cluster.get(option)));
            }
        }
        return settings;
    }

    private static void rejectUnknownKeys(Configuration config) {
        for (Map.Entry<String, String> entry : config.toMap().entrySet()) {
            String key = entry.getKey();
            if (key.startsWith(ClonosOptions.PREFIX) && !KNOWN_KEYS.contains(key)) {
                throw new IllegalConfigurationException(
                        String.format(
                                "Unknown configuration key '%s' (value '%s'). Clonos knows: %s.",
                                key,
                                entry.getValue(),
                                String.join(", ", new TreeSet<>(KNOWN_KEYS))));
            }
        }
    }

    private static <E extends Enum<E>> E readEnum(
            Configuration config, ConfigOption<E> option, Class<E> type) {
        return read(config, option, e -> true, "one of " + ConfigValues.allowed(type));
    }

    private static <T> T read(
            Configuration config, ConfigOption<T> option, Predicate<T> valid, String allowed) {
        T value;
        try {
            value = config.get(option);
        } catch (IllegalArgumentException e) {
            throw invalid(option, config.toMap().get(option.key()), allowed);
        }
        if (!valid.test(value)) {
            throw invalid(option, config.toMap().get(option.key()), allowed);
        }
        return value;
    }

    /** Reads {@code clonos.recovery.restart-delay}; fails fast on a value it does not know. */
    private static LocalRestartDelay readRestartDelay(Configuration config) {
        String raw = config.get(ClonosOptions.RECOVERY_RESTART_DELAY).trim();
        if (raw.equalsIgnoreCase(LocalRestartDelay.RESTART_STRATEGY)) {
            return LocalRestartDelay.ofRestartStrategy();
        }
        if (raw.equalsIgnoreCase(LocalRestartDelay.IMMEDIATE_UNLESS_REPEATED)) {
            return LocalRestartDelay.ofImmediateUnlessRepeated();
        }
        String allowed =
                LocalRestartDelay.IMMEDIATE_UNLESS_REPEATED
                        + ", "
                        + LocalRestartDelay.RESTART_STRATEGY
                        + " or a duration of 0 ms or more such as 100 ms";
        Duration delay;
        try {
            delay = TimeUtils.parseDuration(raw);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw invalid(ClonosOptions.RECOVERY_RESTART_DELAY, raw, allowed);
        }
        if (delay.isNegative()) {
            throw invalid(ClonosOptions.RECOVERY_RESTART_DELAY, raw, allowed);
        }
        return LocalRestartDelay.of(delay);
    }

    private static IllegalConfigurationException invalid(
            ConfigOption<?> option, String rawValue, String allowed) {
        return new IllegalConfigurationException(
                String.format(
                        "Invalid value '%s' for configuration key '%s': allowed is %s.",
                        rawValue, option.key(), allowed));
    }

    private static boolean positive(MemorySize size) {
        return size.getBytes() > 0;
    }

    /** -1 for full depth, 0 when causal logging is off. */
    public int getDeterminantSharingDepth() {
        return determinantSharingDepth;
    }

    /** Which hops count towards the determinant sharing depth. */
    public DeterminantSharingHops getDeterminantSharingHops() {
        return determinantSharingHops;
    }

    /**
     * Whether user code's clock and random calls are served from the causal log ({@code
     * clonos.user-code.causal-calls}).
     */
    public boolean isUserCodeCausalCallsEnabled() {
        return userCodeCausalCalls;
    }

    /** Whether a task may be failed on request ({@code clonos.fault-injection.enabled}). */
    public boolean isFailOnRequestEnabled() {
        return failOnRequest;
    }

    public MemorySize getDeterminantMemory() {
        return determinantMemory;
    }

    public Duration getTimeServiceGranularity() {
        return timeServiceGranularity;
    }

    public InFlightLogType getInFlightLogType() {
        return inFlightLogType;
    }

    public MemorySize getInFlightLogMemory() {
        return inFlightLogMemory;
    }

    public SpillPolicy getSpillPolicy() {
        return spillPolicy;
    }

    public double getSpillTrigger() {
        return spillTrigger;
    }

    public int getPrefetchBuffers() {
        return prefetchBuffers;
    }

    public RecoveryMode getRecoveryMode() {
        return recoveryMode;
    }

    public OrphanFallback getOrphanFallback() {
        return orphanFallback;
    }

    /** How long local recoveries wait. */
    public LocalRestartDelay getRestartDelay() {
        return restartDelay;
    }

    public Duration getReconnectTimeout() {
        return reconnectTimeout;
    }

    /** The longest time checkpoints wait for local replays; zero: they never wait. */
    public Duration getCheckpointPause() {
        return checkpointPause;
    }

    public boolean isStandbyEnabled() {
        return standbyEnabled;
    }

    public int getStandbyCount() {
        return standbyCount;
    }

    public StandbyPlacement getStandbyPlacement() {
        return standbyPlacement;
    }

    public Duration getStandbyTransferWait() {
        return standbyTransferWait;
    }

    public Duration getStandbyRedeployDelay() {
        return standbyRedeployDelay;
    }

    /** What serves a job's Flink {@code KafkaSink} with exactly-once delivery. */
    public KafkaSinkExactlyOnce getKafkaSinkExactlyOnce() {
        return kafkaSinkExactlyOnce;
    }

    @Override
    public String toString() {
        return "ClonosConfiguration{dsd="
                + (determinantSharingDepth == ClonosOptions.FULL_DETERMINANT_SHARING_DEPTH
                        ? "full"
                        : String.valueOf(determinantSharingDepth))
                + (determinantSharingHops == DeterminantSharingHops.EVERY_TASK
                        ? " (every task)"
                        : "")
                + ", recovery="
                + recoveryMode
                + ", orphanFallback="
                + orphanFallback
                + ", restartDelay="
                + restartDelay
                + ", inFlightLog="
                + inFlightLogType
                + "/"
                + inFlightLogMemory
                + "/"
                + spillPolicy
                + ", standby="
                + (standbyEnabled ? standbyCount + "x " + standbyPlacement : "off")
                + '}';
    }
}
