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

package io.clonos.streaming.recovery;

import io.clonos.examples.CommittedLinesSink;
import io.clonos.runtime.minicluster.ClonosMiniCluster;
import io.clonos.runtime.scheduler.FailTaskRequest;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.SerializedValue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink SQL on Clonos: a window TVF aggregate (TUMBLE over a datagen table whose event time and
 * watermark the DDL declares, so that the planner's watermark assigner runs chained to the source)
 * loses one task, the assigner's or the windows', and recovers it alone: every (key, window) row is
 * committed exactly once with the result its rows give.
 */
class SqlRecoveryITCase {

    private static final long COUNT = 6_000;
    private static final int KEYS = 8;

    @TempDir Path work;

    private ClonosMiniCluster cluster;

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"WatermarkAssigner", "GlobalWindowAggregate"})
    void aWindowAggregateRecoversLocally(String operator) throws Exception {
        cluster = SliceRecoveryITCase.spreadCluster("-1");
        Path output = Files.createDirectories(work.resolve("rows"));
        JobGraph jobGraph = windowAggregate(output);
        String vertex = vertexWith(jobGraph, operator);
        JobID job = cluster.submitJob(jobGraph).get().getJobID();

        SliceRecoveryITCase.awaitCommittedLinks(output, KEYS);
        cluster.deliverCoordinationRequestToCoordinator(
                        job,
                        FailTaskRequest.TARGET,
                        new SerializedValue<>(new FailTaskRequest(vertex, 0)))
                .get(1, TimeUnit.MINUTES);
        assertThat(cluster.requestJobResult(job).get(3, TimeUnit.MINUTES).isSuccess()).isTrue();

        AccessExecutionGraph finished = cluster.getArchivedExecutionGraph(job).get();
        assertThat(SliceRecoveryITCase.restartedSubtasks(finished))
                .as(() -> "only the failed subtask restarts, once; " + Attempts.why(finished))
                .isEqualTo(Set.of(vertex + "[0]"));
        assertThat(violations(CommittedLinesSink.committedLines(output)))
                .as("windows lost, repeated or wrong")
                .isEmpty();
    }

    /** The SQL job, built by the planner into the job graph a client submits. */
    private static JobGraph windowAggregate(Path output) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(500);
        StreamTableEnvironment tables = StreamTableEnvironment.create(env);
        tables.getConfig().setLocalTimeZone(ZoneOffset.UTC);
        tables.executeSql(
                "CREATE TABLE events ("
                        + " id BIGINT,"
                        + " k AS id % "
                        + KEYS
                        + ","
                        + " ts AS TO_TIMESTAMP_LTZ(id * 10, 3),"
                        + " WATERMARK FOR ts AS ts - INTERVAL '0.1' SECOND"
                        + ") WITH ("
                        + " 'connector' = 'datagen',"
                        + " 'rows-per-second' = '1000',"
                        + " 'fields.id.kind' = 'sequence',"
                        + " 'fields.id.start' = '1',"
                        + " 'fields.id.end' = '"
                        + COUNT
                        + "')");
        tables.toDataStream(
                        tables.sqlQuery(
                                "SELECT k, window_start, COUNT(*) AS c, SUM(id) AS s"
                                        + " FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts),"
                                        + " INTERVAL '1' SECOND))"
                                        + " GROUP BY k, window_start, window_end"))
                .map(SqlRecoveryITCase::line)
                .returns(Types.STRING)
                .name("format")
                .addSink(new CommittedLinesSink(output.toString()))
                .name("sink");
        return env.getStreamGraph().getJobGraph();
    }

    private static String line(Row row) {
        return row.getField(0)
                + ","
                + ((LocalDateTime) row.getField(1)).toInstant(ZoneOffset.UTC).toEpochMilli()
                + ","
                + row.getField(2)
                + ","
                + row.getField(3);
    }

    private static String vertexWith(JobGraph jobGraph, String operator) {
        for (JobVertex vertex : jobGraph.getVertices()) {
            if (vertex.getName().contains(operator)) {
                return vertex.getName();
            }
        }
        throw new AssertionError("No vertex runs " + operator);
    }

    /** Windows lost, repeated or with another result than their rows give. */
    private static List<String> violations(List<String> lines) {
        Map<String, long[]> expected = new TreeMap<>();
        for (long id = 1; id <= COUNT; id++) {
            long start = id * 10 / 1_000 * 1_000;
            long[] window = expected.computeIfAbsent((id % KEYS) + "," + start, w -> new long[2]);
            window[0]++;
            window[1] += id;
        }
        List<String> violations = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : lines) {
            String[] f = line.split(",");
            String window = f[0] + "," + f[1];
            if (seen.merge(window, 1, Integer::sum) > 1) {
                violations.add("repeated " + line);
            }
            long[] result = expected.get(window);
            if (result == null
                    || result[0] != Long.parseLong(f[2])
                    || result[1] != Long.parseLong(f[3])) {
                violations.add("wrong " + line);
            }
        }
        expected.keySet().stream()
                .filter(window -> !seen.containsKey(window))
                .forEach(window -> violations.add("lost " + window));
        return violations;
    }
}
