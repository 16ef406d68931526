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

package io.clonos.runtime.entrypoint;

import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.shuffle.ClonosShuffleServiceFactory;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.SchedulerExecutionMode;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.shuffle.ShuffleServiceOptions;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a user's Flink configuration into the configuration of a Clonos cluster process. Every
 * process (embedded cluster, JobManager, TaskManager) goes through here, so the Flink settings that
 * Clonos depends on are set in one place and cannot differ between processes.
 */
@Internal
public final class ClonosClusterConfiguration {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosClusterConfiguration.class);

    /**
     * Validates the {@code clonos.} keys and returns a copy with Clonos's shuffle service and
     * without buffer debloating, whose buffer sizes would be one more source of nondeterminism to
     * log for nothing.
     *
     * @throws IllegalConfigurationException on a bad {@code clonos.} value, a shuffle service that
     *     is not Clonos's, or a scheduler other than Flink's default (Clonos's extends it)
     */
    public static Configuration prepare(Configuration userConfiguration) {
        ClonosConfiguration.fromConfiguration(userConfiguration);
        Configuration config = new Configuration(userConfiguration);
        refuseOtherSchedulers(config);

        String shuffle = ClonosShuffleServiceFactory.class.getName();
        config.getOptional(ShuffleServiceOptions.SHUFFLE_SERVICE_FACTORY_CLASS)
                .filter(configured -> !configured.equals(shuffle))
                .filter(
                        configured ->
                                !configured.equals(
                                        ShuffleServiceOptions.NETTY_SHUFFLE_SERVICE_FACTORY_CLASS))
                .ifPresent(
                        configured -> {
                            throw new IllegalConfigurationException(
                                    String.format(
                                            "Invalid value '%s' for configuration key '%s': a Clonos cluster needs %s.",
                                            configured,
                                            ShuffleServiceOptions.SHUFFLE_SERVICE_FACTORY_CLASS
                                                    .key(),
                                            shuffle));
                        });
        config.set(ShuffleServiceOptions.SHUFFLE_SERVICE_FACTORY_CLASS, shuffle);

        if (config.get(TaskManagerOptions.BUFFER_DEBLOAT_ENABLED)) {
            LOG.warn(
                    "Ignoring '{}: true': Clonos needs fixed network buffer sizes.",
                    TaskManagerOptions.BUFFER_DEBLOAT_ENABLED.key());
        }
        config.set(TaskManagerOptions.BUFFER_DEBLOAT_ENABLED, false);
        return config;
    }

    /**
     * Clonos's scheduler extends Flink's default one: the adaptive scheduler (and reactive mode,
     * which runs on it) would be replaced by it without a word, so they are refused.
     */
    private static void refuseOtherSchedulers(Configuration config) {
        config.getOptional(JobManagerOptions.SCHEDULER)
                .filter(scheduler -> scheduler != JobManagerOptions.SchedulerType.Default)
                .ifPresent(
                        scheduler -> {
                            throw new IllegalConfigurationException(
                                    String.format(
                                            "Invalid value '%s' for configuration key '%s': a Clonos cluster runs Clonos's scheduler, which extends Flink's '%s' one; the adaptive scheduler is not supported.",
                                            scheduler,
                                            JobManagerOptions.SCHEDULER.key(),
                                            JobManagerOptions.SchedulerType.Default));
                        });
        if (config.get(JobManagerOptions.SCHEDULER_MODE) == SchedulerExecutionMode.REACTIVE) {
            throw new IllegalConfigurationException(
                    String.format(
                            "Invalid value '%s' for configuration key '%s': reactive mode runs on Flink's adaptive scheduler, which a Clonos cluster does not support (leave the key unset).",
                            SchedulerExecutionMode.REACTIVE,
                            JobManagerOptions.SCHEDULER_MODE.key()));
        }
    }

    private ClonosClusterConfiguration() {}
}
