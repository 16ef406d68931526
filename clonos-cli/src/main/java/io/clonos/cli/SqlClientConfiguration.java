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

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ConfigurationUtils;
import org.apache.flink.configuration.GlobalConfiguration;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

/**
 * The configuration directory Flink's SQL client reads under {@code bin/clonos sql}: the cluster's,
 * with the configuration file's {@code clonos.} keys left out by the rule of {@code bin/clonos run}
 * ({@link ProgramRunner#jobConfiguration}): they are the cluster's settings, and the jobs a
 * statement submits carry only the Clonos settings they set ({@code SET} or {@code -D}).
 */
final class SqlClientConfiguration {

    private SqlClientConfiguration() {}

    /**
     * Writes the configuration file of {@code confDir} into {@code to} without its {@code clonos.}
     * keys, under the same file name (config.yaml, or a legacy flink-conf.yaml).
     */
    static Path write(Path confDir, Path to) throws IOException {
        Configuration file = GlobalConfiguration.loadConfiguration(confDir.toString());
        Configuration client = ProgramRunner.jobConfiguration(file, Set.of());
        // the file Flink read: a legacy flink-conf.yaml before config.yaml
        String name =
                Files.exists(confDir.resolve(GlobalConfiguration.LEGACY_FLINK_CONF_FILENAME))
                        ? GlobalConfiguration.LEGACY_FLINK_CONF_FILENAME
                        : GlobalConfiguration.FLINK_CONF_FILENAME;
        Files.createDirectories(to);
        return Files.write(
                to.resolve(name), ConfigurationUtils.convertConfigToWritableLines(client, false));
    }
}
