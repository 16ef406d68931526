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

import io.clonos.runtime.minicluster.EmbeddedClusters;
import io.clonos.runtime.minicluster.EmbeddedTaskManagers;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;

import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Standby tasks with checkpoints on HDFS (an in-process MiniDFSCluster): the standbys copy their
 * primaries' RocksDB files from HDFS to local disk, and when a TaskManager is lost its stateful
 * subtask is replaced where its standby held the copies, at the first try, and every record
 * arrives.
 */
class StandbyHdfsIT {

    private static final int RECORDS = 8_000;
    private static final int RATE = 400;
    private static final int PARALLELISM = 2;

    @TempDir Path work;

    @Test
    void standbysCopyFromHdfsAndReplaceALostTaskManagersSubtask() throws Exception {
        org.apache.hadoop.conf.Configuration hadoop = new org.apache.hadoop.conf.Configuration();
        hadoop.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, work.resolve("hdfs").toString());
        MiniDFSCluster hdfs = new MiniDFSCluster.Builder(hadoop).numDataNodes(1).build();
        try {
            Path tmp = Files.createDirectories(work.resolve("tmp"));
            Configuration config = EmbeddedClusters.killConfiguration();
            config.setString("state.backend.type", "rocksdb");
            config.setString("state.backend.incremental", "true");
            config.setString(
                    "state.checkpoints.dir",
                    "hdfs://localhost:" + hdfs.getNameNodePort() + "/checkpoints");
            config.setString("io.tmp.dirs", tmp.toString());
            config.setString("clonos.standby.enabled", "true");
            try (MiniCluster cluster = EmbeddedClusters.start(true, config, 3, PARALLELISM)) {
                JobID job =
                        cluster.submitJob(
                                        SyntheticJob.build(
                                                RECORDS,
                                                RATE,
                                                64,
                                                PARALLELISM,
                                                4 * 1024,
                                                500,
                                                true,
                                                work.resolve("probes")))
                                .get()
                                .getJobID();
                awaitCopies(tmp.resolve("clonos-standby").resolve(job.toHexString()));
                int subtask = StandbyBenchmark.subtaskWithStandbyElsewhere(cluster, job);
                AccessExecutionGraph graph = cluster.getExecutionGraph(job).get();
                String victim =
                        location(
                                EmbeddedClusters.vertex(graph, "stateful-map")
                                        .getTaskVertices()[subtask]);
                String standby =
                        location(
                                EmbeddedClusters.vertex(graph, "Standby: stateful-map")
                                        .getTaskVertices()[subtask]);
                cluster.terminateTaskManager(EmbeddedTaskManagers.indexOf(cluster, victim)).get();

                assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess())
                        .isTrue();
                AccessExecutionVertex replaced =
                        EmbeddedClusters.vertex(
                                        cluster.getArchivedExecutionGraph(job).get(),
                                        "stateful-map")
                                .getTaskVertices()[subtask];
                assertThat(replaced.getCurrentExecutionAttempt().getAttemptNumber())
                        .as("replaced once, restored at the first try")
                        .isEqualTo(1);
                assertThat(location(replaced))
                        .as("where its standby held the copies")
                        .isEqualTo(standby);
            }
            assertThat(lost(work.resolve("probes")))
                    .as("records that never reached the sink")
                    .isEmpty();
        } finally {
            hdfs.shutdown();
        }
    }

    /** Waits until a standby holds copies of state files (copied from HDFS, not linked). */
    private static void awaitCopies(Path standbys) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (Files.isDirectory(standbys)) {
                try (Stream<Path> files = Files.walk(standbys)) {
                    if (files.anyMatch(
                            f ->
                                    Files.isRegularFile(f)
                                            && !f.getFileName().toString().endsWith(".partial")
                                            && !f.getParent()
                                                    .getFileName()
                                                    .toString()
                                                    .startsWith("db-"))) {
                        return;
                    }
                } catch (java.io.UncheckedIOException e) {
                    // a standby replaced its copy (a newer checkpoint) while the walk read it: the
                    // next poll walks the new one
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("No standby copied state from HDFS in time");
    }

    private static String location(AccessExecutionVertex vertex) {
        return vertex.getCurrentAssignedResourceLocation().getResourceID().getResourceIdString();
    }

    /** Sequence numbers that must arrive (SyntheticJob#mustArrive) and did not. */
    private static Set<Long> lost(Path probes) throws IOException {
        Set<Long> arrived = new HashSet<>();
        for (long[] record : SyntheticJob.received(probes)) {
            arrived.add(record[1]);
        }
        Set<Long> lost = new HashSet<>();
        for (long seq = 0; seq < RECORDS; seq++) {
            if (SyntheticJob.mustArrive(seq, RECORDS, PARALLELISM, RATE)
                    && !arrived.contains(seq)) {
                lost.add(seq);
            }
        }
        return lost;
    }
}
