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
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;

/**
 * Where a Clonos distribution keeps things: {@code conf/} (Flink configuration), {@code run/} (pid
 * files of a standalone cluster), {@code log/} and {@code examples/}. The run and log directories
 * can be moved with {@code CLONOS_RUN_DIR} and {@code CLONOS_LOG_DIR}, the configuration with
 * {@code CLONOS_CONF_DIR} or {@code --conf-dir}.
 */
@Internal
public final class ClonosHome {

    private final Path home;
    private final Path confDir;
    private final Path runDir;
    private final Path logDir;

    private ClonosHome(Path home, Path confDir, Path runDir, Path logDir) {
        this.home = home;
        this.confDir = confDir;
        this.runDir = runDir;
        this.logDir = logDir;
    }

    public static ClonosHome fromEnvironment(Map<String, String> env, String confDirOverride) {
        Path home =
                Paths.get(System.getProperty("clonos.home", env.getOrDefault("CLONOS_HOME", ".")))
                        .toAbsolutePath()
                        .normalize();
        Path conf =
                confDirOverride != null
                        ? Paths.get(confDirOverride)
                        : Paths.get(
                                env.getOrDefault(
                                        "CLONOS_CONF_DIR", home.resolve("conf").toString()));
        Path run = Paths.get(env.getOrDefault("CLONOS_RUN_DIR", home.resolve("run").toString()));
        Path log = Paths.get(env.getOrDefault("CLONOS_LOG_DIR", home.resolve("log").toString()));
        return new ClonosHome(
                home, conf.toAbsolutePath(), run.toAbsolutePath(), log.toAbsolutePath());
    }

    /**
     * The same installation, its processes' pid files and logs in {@code runDir} and {@code
     * logDir}.
     */
    public ClonosHome withRunAndLogDirs(Path runDir, Path logDir) {
        return new ClonosHome(home, confDir, runDir.toAbsolutePath(), logDir.toAbsolutePath());
    }

    /** The configuration in the conf directory, overridden by {@code -D key=value} arguments. */
    public Configuration loadConfiguration(Map<String, String> dynamicProperties) {
        return GlobalConfiguration.loadConfiguration(
                confDir.toString(), Configuration.fromMap(dynamicProperties));
    }

    public Path home() {
        return home;
    }

    Path confDir() {
        return confDir;
    }

    Path runDir() {
        return runDir;
    }

    Path logDir() {
        return logDir;
    }

    public Path examplesJar() {
        return home.resolve("examples").resolve("clonos-examples.jar");
    }
}
