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

import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code bin/clonos bench standby} with its checkpoints on HDFS (an in-process MiniDFSCluster),
 * where a replacement without a standby downloads its state: the benchmark's figures for remote
 * checkpoint storage. Slow (several minutes); not in the default run: {@code ./mvnw -pl clonos-dist
 * verify -Dit.test=StandbyBenchmarkOnHdfsIT -Dclonos.excludedGroups=}. Prints the figures and
 * writes them to {@code target/bench-standby-hdfs/summary.json}.
 */
@Tag("slow")
class StandbyBenchmarkOnHdfsIT {

    @TempDir Path work;

    @Test
    @Timeout(value = 20, unit = TimeUnit.MINUTES)
    void standbyBenchmarkWithCheckpointsOnHdfs() throws Exception {
        org.apache.hadoop.conf.Configuration hadoop = new org.apache.hadoop.conf.Configuration();
        hadoop.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, work.resolve("hdfs").toString());
        MiniDFSCluster hdfs = new MiniDFSCluster.Builder(hadoop).numDataNodes(1).build();
        try {
            KillSettings settings = StandbyBenchmark.defaults();
            settings.checkpointDir = "hdfs://localhost:" + hdfs.getNameNodePort() + "/checkpoints";
            settings.output = Path.of("target", "bench-standby-hdfs");

            String json = new StandbyBenchmark(settings, System.out).run();

            assertThat(json)
                    .contains("\"checkpoints\":\"hdfs://")
                    .contains("\"standby\":{")
                    .contains("\"withoutStandby\":{");
        } finally {
            hdfs.shutdown();
        }
    }
}
