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
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.configuration.PipelineOptions;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class SqlClientConfigurationTest {

    /**
     * The SQL client's copy of a config.yaml has none of its clonos keys, nested or flat, and every
     * other key with its value.
     */
    @Test
    void theSqlClientsCopyLeavesOutTheClusterClonosKeys(@TempDir Path conf, @TempDir Path out)
            throws Exception {
        Files.writeString(
                conf.resolve("config.yaml"),
                String.join(
                        "\n",
                        "rest:",
                        "  address: localhost",
                        "  port: 8081",
                        "clonos:",
                        "  in-flight-log:",
                        "    memory: 64mb",
                        "  determinant-sharing-depth: 1",
                        "clonos.standby.enabled: true",
                        "execution.checkpointing.interval: 5 s",
                        "pipeline.classpaths: ['file:///a.jar', 'file:///b.jar']",
                        ""));

        Path written = SqlClientConfiguration.write(conf, out);

        assertThat(written.getFileName().toString()).isEqualTo("config.yaml");
        Configuration copy = GlobalConfiguration.loadConfiguration(out.toString());
        assertThat(copy.keySet()).noneMatch(key -> key.startsWith("clonos."));
        assertThat(copy.toMap())
                .containsEntry("rest.address", "localhost")
                .containsEntry("rest.port", "8081")
                .containsEntry("execution.checkpointing.interval", "5 s");
        assertThat(copy.get(PipelineOptions.CLASSPATHS))
                .containsExactly("file:///a.jar", "file:///b.jar");
    }
}
