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

package io.clonos.cli;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The JVM options a standalone cluster's process gets from Flink's {@code
 * env.java.default-opts.all}, {@code env.java.opts.all} and the role's ({@code
 * env.java.default-opts.taskmanager}, {@code env.java.opts.taskmanager}, or the jobmanager's), as
 * Flink's start scripts give them, in that order: split at white space, and {@code
 * ${FLINK_LOG_PREFIX}} (which the scripts' shell expands, for GC logs and flight recordings) the
 * process's log file without its extension.
 */
@Internal
final class ProcessJavaOptions {

    /** What Flink's scripts expand to the process's log file without its {@code .log}. */
    static final String LOG_PREFIX = "${FLINK_LOG_PREFIX}";

    private ProcessJavaOptions() {}

    static List<String> jobManager(Configuration config, Path logPrefix) {
        return of(
                config,
                CoreOptions.FLINK_DEFAULT_JM_JVM_OPTIONS,
                CoreOptions.FLINK_JM_JVM_OPTIONS,
                logPrefix);
    }

    static List<String> taskManager(Configuration config, Path logPrefix) {
        return of(
                config,
                CoreOptions.FLINK_DEFAULT_TM_JVM_OPTIONS,
                CoreOptions.FLINK_TM_JVM_OPTIONS,
                logPrefix);
    }

    private static List<String> of(
            Configuration config,
            ConfigOption<String> roleDefaults,
            ConfigOption<String> role,
            Path logPrefix) {
        List<String> options = new ArrayList<>();
        List<ConfigOption<String>> inOrder =
                List.of(
                        CoreOptions.FLINK_DEFAULT_JVM_OPTIONS,
                        CoreOptions.FLINK_JVM_OPTIONS,
                        roleDefaults,
                        role);
        for (ConfigOption<String> key : inOrder) {
            String value = config.getOptional(key).orElse("");
            for (String option : value.trim().split("\\s+")) {
                if (!option.isEmpty()) {
                    options.add(option.replace(LOG_PREFIX, logPrefix.toString()));
                }
            }
        }
        return options;
    }
}
