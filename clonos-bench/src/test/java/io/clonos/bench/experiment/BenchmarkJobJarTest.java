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

package io.clonos.bench.experiment;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;

import static org.assertj.core.api.Assertions.assertThat;

class BenchmarkJobJarTest {

    @TempDir Path work;

    @Test
    void theJarHoldsTheJobsClassesWithTheProbesTheyWriteAndNothingElse() throws Exception {
        List<String> names = new ArrayList<>();
        try (JarFile jar = new JarFile(BenchmarkJobJar.write(work).toFile())) {
            jar.stream().forEach(entry -> names.add(entry.getName()));
        }

        assertThat(names)
                .contains(
                        "io/clonos/bench/experiment/SyntheticJob.class",
                        "io/clonos/bench/experiment/SteadyStateSink.class",
                        "io/clonos/bench/probe/ProbeRecords.class",
                        "io/clonos/bench/stats/LatencyHistogram.class")
                .allMatch(name -> name.startsWith("io/clonos/bench/"))
                .allMatch(name -> name.endsWith(".class"));
    }
}
