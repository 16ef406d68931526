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

package io.clonos.bench.probe;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Probe rows written by several function instances, read back by the benchmark. */
class ProbeRecordsTest {

    @TempDir Path dir;

    @Test
    void everyWritersRowsOfAKindAndNoOtherKindsAreReadBack() throws Exception {
        try (ProbeRecords.Writer a = ProbeRecords.create(dir.toString(), "received", 2);
                ProbeRecords.Writer b = ProbeRecords.create(dir.toString(), "received", 2);
                ProbeRecords.Writer other = ProbeRecords.create(dir.toString(), "other", 2);
                ProbeRecords.Writer longer =
                        ProbeRecords.create(dir.toString(), "received-late", 2)) {
            a.write(1, 10);
            b.write(2, 20);
            a.write(3, 30);
            other.write(9, 90);
            longer.write(8, 80);
        }
        List<long[]> rows = ProbeRecords.read(dir, "received", 2);
        assertThat(rows).extracting(row -> row[0]).containsExactlyInAnyOrder(1L, 2L, 3L);
        assertThat(rows).extracting(row -> row[1]).containsExactlyInAnyOrder(10L, 20L, 30L);
    }

    @Test
    void aPartialRowAtTheEndOfAFileIsIgnored() throws Exception {
        try (ProbeRecords.Writer writer = ProbeRecords.create(dir.toString(), "k", 2)) {
            writer.write(5, 6);
        }
        Path file;
        try (var files = Files.list(dir)) {
            file = files.findFirst().orElseThrow();
        }
        Files.write(file, new byte[] {0, 0, 0, 0, 0, 0, 0, 7, 1, 2}, StandardOpenOption.APPEND);
        assertThat(ProbeRecords.read(dir, "k", 2)).containsExactly(new long[] {5, 6});
    }

    @Test
    void aRowOfTheWrongWidthIsRefused() throws Exception {
        try (ProbeRecords.Writer writer = ProbeRecords.create(dir.toString(), "k", 3)) {
            assertThatThrownBy(() -> writer.write(1, 2))
                    .hasMessageContaining("A row of 2 values where 3 are expected");
        }
    }

    @Test
    void aMissingDirectoryHasNoRows() throws Exception {
        assertThat(ProbeRecords.read(dir.resolve("absent"), "k", 1)).isEmpty();
    }
}
