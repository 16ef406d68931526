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

package io.clonos.docs;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * docs/results.md is what {@link ResultsPage} makes of the manifest and the results files, so it
 * cannot drift from them; {@code -Dclonos.results.write=true} writes it instead.
 */
class ResultsPageTest {

    private static final Path ROOT = Paths.get(System.getProperty("user.dir")).getParent();

    @Test
    void theResultsPageIsWhatTheResultsFilesHold() throws Exception {
        ResultsPage page = new ResultsPage(ROOT);
        if (Boolean.getBoolean("clonos.results.write")) {
            page.write();
        }
        assertThat(Files.readString(ROOT.resolve(ResultsPage.PAGE)))
                .as("%s is stale; regenerate it with %s", ResultsPage.PAGE, ResultsPage.COMMAND)
                .isEqualTo(page.render());
    }

    @Test
    void everyRowLinksAResultsFileThatExists() throws Exception {
        JsonNode manifest =
                new ObjectMapper().readTree(ROOT.resolve(ResultsPage.MANIFEST).toFile());
        assertThat(manifest.path("rows")).hasSizeGreaterThanOrEqualTo(6);
        for (JsonNode row : manifest.path("rows")) {
            assertThat(ROOT.resolve("docs/results").resolve(row.path("file").asText()))
                    .as(row.path("figure").asText())
                    .isRegularFile();
            assertThat(row.path("command").asText()).isNotBlank();
            assertThat(row.path("date").asText()).matches("\\d{4}-\\d{2}-\\d{2}");
        }
    }

    /** The path language on a file whose figures are known. */
    @Test
    void figuresArePickedAndConvertedAsTheManifestSays(@TempDir Path root) throws Exception {
        Path results = Files.createDirectories(root.resolve("docs/results"));
        Files.writeString(
                results.resolve("summary.json"),
                "{\"variants\":[{\"system\":\"Flink\",\"ratio\":1.000},"
                        + "{\"system\":\"DSD 1\",\"ratio\":0.961,\"runs\":[{\"bytes\":1048576},"
                        + "{\"bytes\":3145728}]}],\"clonos\":{\"recovery_ms\":12987}}");
        Files.writeString(
                results.resolve("rows.csv"),
                "query,system,relative\n0,flink,1.000\n0,dsd,0.990\n1,dsd,1.020\n");
        ResultsPage page = new ResultsPage(root);

        assertThat(page.figure("summary.json", "variants[system=DSD 1].ratio")).isEqualTo("0.961");
        assertThat(page.figure("summary.json", "clonos.recovery_ms|s")).isEqualTo("12.99");
        assertThat(page.figure("summary.json", "variants[system=DSD 1].runs[*].bytes|max|mib"))
                .isEqualTo("3.0");
        assertThat(page.figure("summary.json", "variants[1].runs[0].bytes|mib")).isEqualTo("1.0");
        assertThat(page.figure("x", "@rows.csv [system=dsd].relative|mean|fixed3"))
                .isEqualTo("1.005");
        assertThatThrownBy(() -> page.figure("summary.json", "variants[system=DSD 2].ratio"))
                .hasMessageContaining("holds nothing at");
        assertThatThrownBy(() -> page.figure("summary.json", "clonos.recovery_ms|hours"))
                .hasMessageContaining("Unknown operation 'hours'");
    }
}
