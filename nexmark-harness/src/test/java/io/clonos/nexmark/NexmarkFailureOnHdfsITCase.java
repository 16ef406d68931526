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

package io.clonos.nexmark;

import io.clonos.nexmark.failure.FailureQuery;
import io.clonos.nexmark.failure.FailureSettings;
import io.clonos.nexmark.failure.NexmarkFailure;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The failure experiment with its checkpoints on HDFS (an in-process MiniDFSCluster): Q3 loses a
 * TaskManager, Clonos restores the lost subtasks from checkpoints and standby copies of {@code
 * hdfs://} and stays exactly once.
 */
class NexmarkFailureOnHdfsITCase {

    @TempDir Path work;

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void checkpointsOnHdfs() throws Exception {
        org.apache.hadoop.conf.Configuration hadoop = new org.apache.hadoop.conf.Configuration();
        hadoop.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, work.resolve("hdfs").toString());
        MiniDFSCluster hdfs = new MiniDFSCluster.Builder(hadoop).numDataNodes(1).build();
        try {
            String checkpoints =
                    "hdfs://localhost:" + hdfs.getNameNodePort() + "/nexmark-checkpoints";
            FailureSettings settings = new FailureSettings();
            settings.query = FailureQuery.Q3;
            settings.rate = 2_000;
            settings.load = 0;
            settings.checkpointIntervalMs = 1_000;
            settings.seconds = 20;
            settings.killAfterSeconds = 10;
            settings.checkpointDir = checkpoints;
            settings.output = work.resolve("results");

            List<NexmarkFailure.Run> runs =
                    new NexmarkFailure(settings, System.out, List.of()).run();

            NexmarkFailure.Run clonos = runs.get(0);
            assertThat(clonos.system()).isEqualTo("clonos");
            assertThat(clonos.exactlyOnce())
                    .as(
                            "Clonos, exactly once (missing %d, duplicated %d)",
                            clonos.missing(), clonos.duplicated())
                    .isTrue();
            assertThat(clonos.local()).as("Clonos restarted only the lost subtasks").isTrue();
            // the runs' checkpoints went to HDFS
            FileSystem fs = FileSystem.get(URI.create(checkpoints), hadoop);
            assertThat(fs.listStatus(new org.apache.hadoop.fs.Path(checkpoints)))
                    .extracting(status -> status.getPath().getName())
                    .anyMatch(name -> name.startsWith("nexmark-q3-clonos-"))
                    .anyMatch(name -> name.startsWith("nexmark-q3-flink-"));
        } finally {
            hdfs.shutdown();
        }
    }
}
