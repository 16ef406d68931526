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

package io.clonos.examples;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;

import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;

/**
 * The event-time window job as Flink SQL, in a jar whose Table API dependency is provided (the
 * cluster's lib/ has it): a datagen table whose DDL declares the event time and the watermark, and
 * a window TVF aggregate, {@code TUMBLE} of one second, per key; its rows go to a sink that commits
 * on checkpoints ({@link CommittedLinesSink}), one line {@code key,windowStart,count,sum} each.
 *
 * <p>Row {@code id} (1 to {@code count}) has key {@code id % keys} and event time {@code id * 10}
 * ms, so every window's result is known beforehand ({@link #violations}). Arguments: {@code
 * --count} (default 12000), {@code --rate} rows per second (default 1000), {@code --keys} (default
 * 8), {@code --parallelism} (default 2), {@code --checkpoint-interval} ms (default 500), {@code
 * --output}.
 */
public final class SqlWindowJob {

    private SqlWindowJob() {}

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(params.getInt("parallelism", 2));
        build(
                env,
                params.getLong("count", 12_000),
                params.getInt("rate", 1_000),
                params.getInt("keys", 8),
                params.getLong("checkpoint-interval", 500),
                params.getRequired("output"));
        env.execute("sql windows");
    }

    /** Adds the job to {@code env}, at its parallelism. */
    public static void build(
            StreamExecutionEnvironment env,
            long count,
            int rate,
            int keys,
            long checkpointInterval,
            String output) {
        env.enableCheckpointing(checkpointInterval);
        StreamTableEnvironment tables = StreamTableEnvironment.create(env);
        tables.getConfig().setLocalTimeZone(ZoneOffset.UTC);
        tables.executeSql(
                "CREATE TABLE events ("
                        + " id BIGINT,"
                        + " k AS id % "
                        + keys
                        + ","
                        + " ts AS TO_TIMESTAMP_LTZ(id * 10, 3),"
                        + " WATERMARK FOR ts AS ts - INTERVAL '0.1' SECOND"
                        + ") WITH ("
                        + " 'connector' = 'datagen',"
                        + " 'rows-per-second' = '"
                        + rate
                        + "',"
                        + " 'fields.id.kind' = 'sequence',"
                        + " 'fields.id.start' = '1',"
                        + " 'fields.id.end' = '"
                        + count
                        + "')");
        tables.toDataStream(
                        tables.sqlQuery(
                                "SELECT k, window_start, COUNT(*) AS c, SUM(id) AS s"
                                        + " FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts),"
                                        + " INTERVAL '1' SECOND))"
                                        + " GROUP BY k, window_start, window_end"))
                .map(SqlWindowJob::line)
                .returns(Types.STRING)
                .name("format")
                .addSink(new CommittedLinesSink(output))
                .name("sink");
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

    /**
     * What is wrong with the committed {@code lines} of a run over {@code count} rows in {@code
     * keys} keys: windows lost, repeated or with another result than their rows give; empty if
     * nothing.
     */
    public static List<String> violations(List<String> lines, long count, int keys) {
        WindowResults expected = new WindowResults();
        for (long id = 1; id <= count; id++) {
            expected.add(id % keys, id * 10 / 1_000 * 1_000, id);
        }
        return expected.violations(lines);
    }
}
