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
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;

import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The event-time window job as Flink SQL, in a jar whose Table API dependency is provided (the
 * cluster's lib/ has it): a datagen table whose DDL declares the event time and the watermark, and
 * a window TVF aggregate, {@code TUMBLE} of one second, per key; its rows go to a sink that commits
 * on checkpoints ({@link CommittedLinesSink}), one line {@code key,windowStart,count,sum} each.
 *
 * <p>With {@code --join-and-match true} the job runs two more statements into the same sink: an
 * interval join of {@code events} with a second datagen table {@code other} of the same ids (a line
 * {@code join,id} per id) and a {@code MATCH_RECOGNIZE} per key of a row whose {@code id % (2 *
 * keys)} is below {@code keys} followed by the key's next row (a line {@code match,a,b} each).
 *
 * <p>Row {@code id} (1 to {@code count}) has key {@code id % keys} and event time {@code id * 10}
 * ms, so every result is known beforehand ({@link #violations}). Arguments: {@code --count}
 * (default 12000), {@code --rate} rows per second (default 1000), {@code --keys} (default 8),
 * {@code --parallelism} (default 2), {@code --checkpoint-interval} ms (default 500), {@code
 * --join-and-match} (default false), {@code --output}.
 */
public final class SqlWindowJob {

    /** The first field of a join's line. */
    public static final String JOIN = "join";

    /** The first field of a match's line. */
    public static final String MATCH = "match";

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
                params.getBoolean("join-and-match", false),
                params.getRequired("output"));
        env.execute("sql windows");
    }

    /** Adds the window aggregate alone to {@code env}, at its parallelism. */
    public static void build(
            StreamExecutionEnvironment env,
            long count,
            int rate,
            int keys,
            long checkpointInterval,
            String output) {
        build(env, count, rate, keys, checkpointInterval, false, output);
    }

    /**
     * Adds the job to {@code env}, at its parallelism, with the join and the match if {@code
     * joinAndMatch}.
     */
    public static void build(
            StreamExecutionEnvironment env,
            long count,
            int rate,
            int keys,
            long checkpointInterval,
            boolean joinAndMatch,
            String output) {
        env.enableCheckpointing(checkpointInterval);
        StreamTableEnvironment tables = StreamTableEnvironment.create(env);
        tables.getConfig().setLocalTimeZone(ZoneOffset.UTC);
        for (String table : joinAndMatch ? List.of("events", "other") : List.of("events")) {
            createTable(tables, table, count, rate, keys);
        }
        DataStream<String> lines =
                tables.toDataStream(
                                tables.sqlQuery(
                                        "SELECT k, window_start, COUNT(*) AS c, SUM(id) AS s"
                                                + " FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts),"
                                                + " INTERVAL '1' SECOND))"
                                                + " GROUP BY k, window_start, window_end"))
                        .map(SqlWindowJob::line)
                        .returns(Types.STRING)
                        .name("format");
        if (joinAndMatch) {
            DataStream<String> joined =
                    tables.toDataStream(
                                    tables.sqlQuery(
                                            "SELECT e.id FROM events e, other o WHERE e.id = o.id"
                                                    + " AND e.ts BETWEEN o.ts - INTERVAL '1' SECOND"
                                                    + " AND o.ts + INTERVAL '1' SECOND"))
                            .map(row -> JOIN + "," + row.getField(0))
                            .returns(Types.STRING)
                            .name("format join");
            DataStream<String> matched =
                    tables.toDataStream(
                                    tables.sqlQuery(
                                            "SELECT a, b FROM events MATCH_RECOGNIZE (PARTITION BY k"
                                                    + " ORDER BY ts MEASURES A.id AS a, B.id AS b"
                                                    + " ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST"
                                                    + " ROW PATTERN (A B) DEFINE A AS A.id % "
                                                    + (2 * keys)
                                                    + " < "
                                                    + keys
                                                    + ")"))
                            .map(row -> MATCH + "," + row.getField(0) + "," + row.getField(1))
                            .returns(Types.STRING)
                            .name("format match");
            lines = lines.union(joined, matched);
        }
        lines.addSink(new CommittedLinesSink(output)).name("sink");
    }

    /** A datagen table of ids 1 to {@code count}, their key and their event time. */
    private static void createTable(
            StreamTableEnvironment tables, String name, long count, int rate, int keys) {
        tables.executeSql(
                "CREATE TABLE "
                        + name
                        + " ("
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
     * What is wrong with the committed {@code lines} of a run of the window aggregate alone over
     * {@code count} rows in {@code keys} keys; empty if nothing.
     */
    public static List<String> violations(List<String> lines, long count, int keys) {
        return violations(lines, count, keys, false);
    }

    /**
     * What is wrong with the committed {@code lines} of a run over {@code count} rows in {@code
     * keys} keys: windows, and with {@code joinAndMatch} joined ids and matches, lost, repeated or
     * with another result than their rows give; empty if nothing.
     */
    public static List<String> violations(
            List<String> lines, long count, int keys, boolean joinAndMatch) {
        WindowResults expected = new WindowResults();
        for (long id = 1; id <= count; id++) {
            expected.add(id % keys, id * 10 / 1_000 * 1_000, id);
        }
        List<String> windows = new ArrayList<>();
        List<String> joins = new ArrayList<>();
        List<String> matches = new ArrayList<>();
        for (String line : lines) {
            if (!joinAndMatch) {
                windows.add(line);
            } else if (line.startsWith(JOIN + ",")) {
                joins.add(line);
            } else if (line.startsWith(MATCH + ",")) {
                matches.add(line);
            } else {
                windows.add(line);
            }
        }
        List<String> violations = new ArrayList<>(expected.violations(windows));
        if (joinAndMatch) {
            Set<String> joined = new TreeSet<>();
            Set<String> matched = new TreeSet<>();
            for (long id = 1; id <= count; id++) {
                joined.add(JOIN + "," + id);
                if (id % (2L * keys) < keys && id + keys <= count) {
                    matched.add(MATCH + "," + id + "," + (id + keys));
                }
            }
            violations.addAll(exactlyOnce(joins, joined));
            violations.addAll(exactlyOnce(matches, matched));
        }
        return violations;
    }

    /** The lines of {@code expected} that are lost or repeated, and lines not expected at all. */
    private static List<String> exactlyOnce(List<String> lines, Set<String> expected) {
        List<String> violations = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : lines) {
            if (seen.merge(line, 1, Integer::sum) == 2) {
                violations.add("repeated " + line);
            }
            if (!expected.contains(line)) {
                violations.add("unexpected " + line);
            }
        }
        for (String line : expected) {
            if (!seen.containsKey(line)) {
                violations.add("lost " + line);
            }
        }
        return violations;
    }
}
