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

import io.clonos.bench.probe.DeterminantBytesReporter;
import io.clonos.runtime.minicluster.EmbeddedClusters;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the overhead benchmark reads after a run of the synthetic job: every record the sinks
 * received, and the determinant bytes the tasks logged (through Flink's metric reporters, which
 * Flink finds by service loading).
 */
class BenchmarkProbesTest {

    private static final long RECORDS = 20_000;

    /**
     * Records per second: the input spans two seconds, many of the job's 100 ms processing-time
     * windows. Unthrottled, a fast run could end before its first window fired (a fresh-clone run
     * did, and the sinks received nothing).
     */
    private static final int RATE = 10_000;

    @TempDir Path probes;

    @Test
    void aRunOnClonosHandsBackItsRecordsAndDeterminantBytes() throws Exception {
        Configuration config = new Configuration();
        DeterminantBytesReporter.configure(config, probes);
        try (MiniCluster cluster = EmbeddedClusters.start(true, config, 2, 2)) {
            JobID job =
                    cluster.submitJob(
                                    SyntheticJob.build(
                                            RECORDS, RATE, 16, 2, 64, 200, false, probes))
                            .get()
                            .getJobID();
            assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess()).isTrue();
        }
        // the last window of each key may not fire when the bounded input ends: not every record
        // arrives, but what arrived did once, with its times
        List<long[]> received = SyntheticJob.received(probes);
        assertThat(received).as("the records the sinks received").isNotEmpty();
        assertThat(received.stream().map(row -> row[1]))
                .doesNotHaveDuplicates()
                .allSatisfy(seq -> assertThat(seq).isBetween(0L, RECORDS - 1));
        assertThat(received).allSatisfy(row -> assertThat(row[3]).isGreaterThanOrEqualTo(row[2]));
        long bytes = DeterminantBytesReporter.endedTasksBytes(probes);
        assertThat(bytes)
                .as("the window reads the processing time: its task logs determinants")
                .isPositive();
        Map<String, Long> byKind = DeterminantBytesReporter.endedTasksBytesByKind(probes);
        assertThat(byKind).containsKey("clock");
        assertThat(byKind.values().stream().mapToLong(Long::longValue).sum())
                .as("the kinds' bytes add up to the whole")
                .isEqualTo(bytes);
    }
}
