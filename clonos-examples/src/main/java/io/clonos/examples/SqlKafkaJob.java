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

import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Flink SQL between Kafka topics, in a jar whose Table API and Kafka connector are provided: a
 * {@code kafka} table of JSON rows {@code {"id":…,"k":…}}, a {@code GROUP BY k} with its count and
 * sum (an aggregate with retractions), into an {@code upsert-kafka} table written in Kafka
 * transactions ({@code sink.delivery-guarantee = exactly-once}).
 *
 * <p>The input ends at {@code --rows-per-partition} rows in each of the topic's {@code
 * --partitions} partitions ({@code scan.bounded.mode = specific-offsets}), so the job finishes once
 * a producer wrote them. Every input row updates its key once, so a key's committed updates carry
 * the counts 1, 2, … its number of rows, each once ({@link #violations}). Arguments: {@code
 * --bootstrap-servers}, {@code --input}, {@code --output} (topics), {@code --partitions}, {@code
 * --rows-per-partition}, {@code --parallelism} (default 2), {@code --checkpoint-interval} ms
 * (default 500).
 */
public final class SqlKafkaJob {

    private SqlKafkaJob() {}

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(params.getInt("parallelism", 2));
        env.enableCheckpointing(params.getLong("checkpoint-interval", 500));
        StreamTableEnvironment tables = StreamTableEnvironment.create(env);
        String servers = params.getRequired("bootstrap-servers");
        String input = params.getRequired("input");
        int partitions = params.getInt("partitions");
        long rowsPerPartition = params.getLong("rows-per-partition");
        List<String> ends = new ArrayList<>();
        for (int partition = 0; partition < partitions; partition++) {
            ends.add("partition:" + partition + ",offset:" + rowsPerPartition);
        }
        tables.executeSql(
                "CREATE TABLE events (id BIGINT, k BIGINT) WITH ("
                        + " 'connector' = 'kafka',"
                        + " 'topic' = '"
                        + input
                        + "',"
                        + " 'properties.bootstrap.servers' = '"
                        + servers
                        + "',"
                        + " 'properties.group.id' = 'clonos-sql-kafka',"
                        + " 'scan.startup.mode' = 'earliest-offset',"
                        + " 'scan.bounded.mode' = 'specific-offsets',"
                        + " 'scan.bounded.specific-offsets' = '"
                        + String.join(";", ends)
                        + "',"
                        + " 'format' = 'json')");
        tables.executeSql(
                "CREATE TABLE totals (k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED)"
                        + " WITH ("
                        + " 'connector' = 'upsert-kafka',"
                        + " 'topic' = '"
                        + params.getRequired("output")
                        + "',"
                        + " 'properties.bootstrap.servers' = '"
                        + servers
                        + "',"
                        + " 'properties.transaction.timeout.ms' = '60000',"
                        + " 'sink.delivery-guarantee' = 'exactly-once',"
                        + " 'sink.transactional-id-prefix' = 'clonos-sql-kafka',"
                        + " 'key.format' = 'json',"
                        + " 'value.format' = 'json')");
        tables.executeSql(
                "INSERT INTO totals SELECT k, COUNT(*) AS c, SUM(id) AS s FROM events GROUP BY k");
    }

    /**
     * What is wrong with a run's committed updates, {@code updates} being each key's {@code (count,
     * sum)} values in the order the output topic holds them, when key {@code k} had the input
     * {@code ids.get(k)} in its order: counts lost or repeated, and sums that are not the sum of
     * the key's first {@code count} ids; empty if nothing.
     */
    public static List<String> violations(
            Map<Long, List<long[]>> updates, Map<Long, List<Long>> ids) {
        List<String> violations = new ArrayList<>();
        Map<Long, List<long[]>> all = new TreeMap<>(updates);
        ids.keySet().forEach(key -> all.putIfAbsent(key, List.of()));
        all.forEach(
                (key, values) -> {
                    List<Long> input = ids.getOrDefault(key, List.of());
                    long[] prefixSums = new long[input.size() + 1];
                    for (int i = 0; i < input.size(); i++) {
                        prefixSums[i + 1] = prefixSums[i] + input.get(i);
                    }
                    int expected = 1;
                    for (long[] value : values) {
                        long count = value[0];
                        if (count < 1 || count > input.size()) {
                            violations.add(
                                    "key "
                                            + key
                                            + ": count "
                                            + count
                                            + " of "
                                            + input.size()
                                            + " rows");
                            continue;
                        }
                        if (count != expected) {
                            violations.add(
                                    "key "
                                            + key
                                            + ": count "
                                            + count
                                            + " where "
                                            + expected
                                            + " was next ("
                                            + (count < expected ? "repeated" : "lost")
                                            + ")");
                        } else if (value[1] != prefixSums[(int) count]) {
                            violations.add(
                                    "key "
                                            + key
                                            + ": sum "
                                            + value[1]
                                            + " at count "
                                            + count
                                            + ", expected "
                                            + prefixSums[(int) count]);
                        }
                        expected = (int) count + 1;
                    }
                    if (expected != input.size() + 1) {
                        violations.add(
                                "key "
                                        + key
                                        + ": last count "
                                        + (expected - 1)
                                        + " of "
                                        + input.size()
                                        + " rows");
                    }
                });
        return violations;
    }
}
