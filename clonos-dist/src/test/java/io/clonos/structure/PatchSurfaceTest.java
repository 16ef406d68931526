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

package io.clonos.structure;

import io.clonos.runtime.compatibility.FlinkCompatibility;
import io.clonos.runtime.compatibility.PatchSet;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The surface where Clonos patches Flink (and Beam's Flink runner): every class the project keeps
 * in a Flink or Beam package belongs to its module's {@link PatchSet}, so that the start-up
 * compatibility check sees it, and every patch of every module resolves on the Flink this build
 * uses.
 */
class PatchSurfaceTest {

    @Test
    void everyClassInAFlinkOrBeamPackageIsInItsModulesPatchSet() throws IOException {
        Set<String> inPatchPackages = new TreeSet<>();
        Path root = Paths.get(System.getProperty("user.dir")).getParent();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module : (Iterable<Path>) modules::iterator) {
                Path org = module.resolve("src/main/java/org");
                if (!Files.isDirectory(org)) {
                    continue;
                }
                Path sources = module.resolve("src/main/java");
                try (Stream<Path> files = Files.walk(org)) {
                    files.filter(f -> f.toString().endsWith(".java"))
                            .forEach(
                                    f ->
                                            inPatchPackages.add(
                                                    sources.relativize(f)
                                                            .toString()
                                                            .replace(".java", "")
                                                            .replace('/', '.')));
                }
            }
        }
        assertThat(inPatchPackages).hasSizeGreaterThan(15);
        Set<String> listed = new TreeSet<>();
        for (PatchSet set : patchSets()) {
            set.patchClasses().forEach(patch -> listed.add(patch.getName()));
        }
        assertThat(listed).as("the patch sets' classes").containsAll(inPatchPackages);
    }

    @Test
    void everyModulesPatchesResolveOnThisFlink() {
        assertThat(patchSets())
                .extracting(set -> set.getClass().getSimpleName())
                .containsExactlyInAnyOrder(
                        "RuntimePatches",
                        "StreamingPatches",
                        "BeamPatches",
                        "KafkaConnectorPatches");
        FlinkCompatibility.check(PatchSurfaceTest.class.getClassLoader());
    }

    /** The architecture page's table of patches names exactly the patch sets' classes. */
    @Test
    void theArchitecturePageListsEveryPatch() throws IOException {
        String page =
                Files.readString(
                        Paths.get(System.getProperty("user.dir"))
                                .getParent()
                                .resolve("docs/architecture.md"));
        int start = page.indexOf("## Patches of Flink's behaviour");
        assertThat(start).as("the page's patch section").isNotNegative();
        int end = page.indexOf("\n## ", start + 1);
        Set<String> documented = new TreeSet<>();
        Matcher row =
                Pattern.compile("^\\| `([\\w.]+)` \\|", Pattern.MULTILINE)
                        .matcher(page.substring(start, end));
        while (row.find()) {
            documented.add(row.group(1));
        }
        Set<String> listed = new TreeSet<>();
        for (PatchSet set : patchSets()) {
            set.patchClasses().forEach(patch -> listed.add(patch.getName()));
        }
        assertThat(documented).isEqualTo(listed);
    }

    private static List<PatchSet> patchSets() {
        List<PatchSet> sets = new ArrayList<>();
        ServiceLoader.load(PatchSet.class, PatchSurfaceTest.class.getClassLoader())
                .forEach(sets::add);
        return sets;
    }
}
