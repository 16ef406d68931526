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

package io.clonos.beam;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;

import javax.annotation.Nullable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * A Flink configuration directory for Beam's Flink runner: the user's ({@code --flinkConfDir}, if
 * any) with the pipeline's Clonos settings added. Beam builds the job's environment from it, and
 * what the environment holds is the job's configuration, which the Clonos cluster reads.
 */
@Internal
final class FlinkConfDir {

    private FlinkConfDir() {}

    static Path write(Map<String, String> settings, @Nullable String userConfDir)
            throws IOException {
        Map<String, String> entries = new TreeMap<>();
        if (userConfDir != null && !userConfDir.isBlank()) {
            Configuration user = GlobalConfiguration.loadConfiguration(userConfDir);
            entries.putAll(user.toMap());
        }
        entries.putAll(settings);
        Path dir = Files.createTempDirectory("clonos-beam-conf");
        dir.toFile().deleteOnExit();
        StringBuilder yaml =
                new StringBuilder(
                        "# Written by ClonosRunner: the Flink configuration of one pipeline.\n");
        for (Map.Entry<String, String> entry : entries.entrySet()) {
            yaml.append(entry.getKey())
                    .append(": '")
                    .append(entry.getValue().replace("'", "''"))
                    .append("'\n");
        }
        Path file = Files.writeString(dir.resolve("config.yaml"), yaml.toString());
        file.toFile().deleteOnExit();
        return dir;
    }
}
