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

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import static org.assertj.core.api.Assertions.assertThat;

/** docs/configuration.md documents exactly the options in {@link ClonosOptions}. */
class ConfigurationReferenceTest {

    private static final Path DOC = Paths.get("..", "docs", "configuration.md");

    @Test
    void documentedTableIsTheGeneratedOne() throws Exception {
        String doc = Files.readString(DOC);
        int begin = doc.indexOf(ConfigurationReference.BEGIN_MARKER);
        int end = doc.indexOf(ConfigurationReference.END_MARKER);
        assertThat(begin).as("begin marker in %s", DOC).isNotNegative();
        assertThat(end).as("end marker in %s", DOC).isGreaterThan(begin);
        String documented =
                doc.substring(begin + ConfigurationReference.BEGIN_MARKER.length(), end).strip();
        String generated = ConfigurationReference.markdownTable().strip();

        if (Boolean.getBoolean("clonos.docs.update")) {
            Files.writeString(
                    DOC,
                    doc.substring(0, begin + ConfigurationReference.BEGIN_MARKER.length())
                            + "\n"
                            + generated
                            + "\n"
                            + doc.substring(end));
            return;
        }
        assertThat(documented)
                .as("the table in %s; rewrite it with -Dclonos.docs.update=true", DOC)
                .isEqualTo(generated);
    }
}
