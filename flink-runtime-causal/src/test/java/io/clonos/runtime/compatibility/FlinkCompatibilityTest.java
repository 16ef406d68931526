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

package io.clonos.runtime.compatibility;

import io.clonos.runtime.reflect.ReflectedField;

import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.util.EnvironmentInformation;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FlinkCompatibilityTest {

    @Test
    void everyPatchOfTheRuntimeResolvesOnTheFlinkItWasWrittenFor() {
        assertThat(EnvironmentInformation.getVersion())
                .as("the Flink on the class path")
                .isEqualTo(FlinkCompatibility.PATCHED_FLINK_VERSION);
        FlinkCompatibility.check(FlinkCompatibilityTest.class.getClassLoader());
        assertThat(new RuntimePatches().patchClasses()).hasSizeGreaterThanOrEqualTo(10);
    }

    /**
     * A patch set on the class path (found as at start-up, by its service file) whose patch reads a
     * member this Flink does not have: the check fails naming the Flink found, the patch and the
     * member.
     */
    @Test
    void aMissingMemberFailsTheStartNamingItAndTheFlinkVersion(@TempDir Path services)
            throws Exception {
        Path file =
                Files.createDirectories(services.resolve("META-INF/services"))
                        .resolve(PatchSet.class.getName());
        Files.writeString(file, MovedMemberPatches.class.getName() + "\n");
        try (URLClassLoader withBrokenSet =
                new URLClassLoader(
                        new URL[] {services.toUri().toURL()},
                        FlinkCompatibilityTest.class.getClassLoader())) {
            assertThatThrownBy(() -> FlinkCompatibility.check(withBrokenSet))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Flink " + EnvironmentInformation.getVersion())
                    .hasMessageContaining(MovedMemberPatch.class.getName())
                    .hasMessageContaining(JobVertex.class.getName() + ".operatorIds");
        }
        assertThatThrownBy(
                        () -> FlinkCompatibility.check(List.of(new MovedMemberPatches()), "1.21.0"))
                .hasMessageContaining("does not fit Flink 1.21.0");
    }

    /** A patch set with one patch whose field moved. */
    public static final class MovedMemberPatches implements PatchSet {
        @Override
        public List<Class<?>> patchClasses() {
            return List.of(MovedMemberPatch.class);
        }
    }

    /** Reads JobVertex's operator ids under a name Flink does not use (it is operatorIDs). */
    static final class MovedMemberPatch {
        static final ReflectedField OPERATOR_IDS =
                ReflectedField.of(JobVertex.class, "operatorIds");
    }
}
