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

import io.clonos.examples.Shape.Kind;
import io.clonos.examples.Shape.Stage;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.api.config.ExecutionConfigOptions;
import org.apache.flink.table.functions.ScalarFunction;
import org.apache.flink.types.Row;

/**
 * A {@link Kind#SQL} stage of a {@link GeneratedJob}: the records as a table, a SQL projection that
 * mixes the stage's salt into each record's value with a scalar function (as a {@link Kind#MAP}
 * stage does), and back to a stream. The planner's operators run it: the conversions between stream
 * and table and its generated {@code Calc}. Records that carry event time keep it, and the
 * watermarks pass ({@code SOURCE_WATERMARK()}); behind a stage with processing-time timers, whose
 * records carry none, neither passes.
 */
final class SqlStage {

    private SqlStage() {}

    static DataStream<Tuple3<Long, String, Long>> apply(
            DataStream<Tuple3<Long, String, Long>> input,
            Stage stage,
            String name,
            long salt,
            boolean eventTime) {
        // the stage's own operator at its parallelism first, so that the planner's conversion (at
        // its input's parallelism), its Calc and everything after it chain to it
        DataStream<Tuple3<Long, String, Long>> entered =
                input.map(t -> t)
                        .returns(input.getType())
                        .name(name + "-in")
                        .setParallelism(stage.parallelism);
        StreamTableEnvironment tables =
                StreamTableEnvironment.create(input.getExecutionEnvironment());
        tables.getConfig()
                .set(
                        ExecutionConfigOptions.TABLE_EXEC_RESOURCE_DEFAULT_PARALLELISM,
                        stage.parallelism);
        tables.createTemporarySystemFunction("MIX", Mix.class);
        Table records =
                eventTime
                        ? tables.fromDataStream(
                                entered,
                                Schema.newBuilder()
                                        .columnByMetadata("rowtime", "TIMESTAMP_LTZ(3)")
                                        .watermark("rowtime", "SOURCE_WATERMARK()")
                                        .build())
                        : tables.fromDataStream(entered);
        String view = name.replace('-', '_');
        tables.createTemporaryView(view, records);
        Table mixed =
                tables.sqlQuery(
                        "SELECT f0, f1, MIX(f2, CAST("
                                + salt
                                + " AS BIGINT)) AS f2"
                                + (eventTime ? ", rowtime" : "")
                                + " FROM "
                                + view);
        return tables.toDataStream(mixed)
                .map(
                        (Row row) ->
                                Tuple3.of(
                                        row.<Long>getFieldAs("f0"),
                                        row.<String>getFieldAs("f1"),
                                        row.<Long>getFieldAs("f2")))
                .returns(Types.TUPLE(Types.LONG, Types.STRING, Types.LONG))
                .name(name)
                .setParallelism(stage.parallelism);
    }

    /** {@link HashChains#mix}, as a SQL function. */
    public static final class Mix extends ScalarFunction {
        public long eval(long value, long salt) {
            return HashChains.mix(value, salt);
        }
    }
}
