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

package io.clonos.streaming.jobgraph;

import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.runtime.operators.TimestampsAndWatermarksOperator;

/**
 * Which operators of a job are watermark assigners whose watermarks Clonos logs where they are
 * emitted ({@link io.clonos.streaming.operators.CausalWatermarkAssignerFactory}): operators that
 * generate watermarks of their own from the records they see, the clock and a timer of their own,
 * and keep what they generate them from in no checkpoint: Flink's {@code
 * assignTimestampsAndWatermarks}, the SQL planner's watermark assigner and its processing-time
 * mini-batch assigner (named, since the table runtime is the job's, not Clonos's, dependency).
 */
final class WatermarkAssigners {

    private WatermarkAssigners() {}

    /** The factory of the SQL planner's watermark assigner (a {@code WATERMARK FOR} in a DDL). */
    private static final String SQL_ASSIGNER_FACTORY =
            "org.apache.flink.table.runtime.operators.wmassigners.WatermarkAssignerOperatorFactory";

    /**
     * The SQL planner's processing-time mini-batch assigner, whose watermarks mark the batches by
     * the clock (table.exec.mini-batch.enabled without event time).
     */
    private static final String SQL_PROCTIME_MINI_BATCH_ASSIGNER =
            "org.apache.flink.table.runtime.operators.wmassigners.ProcTimeMiniBatchAssignerOperator";

    /** Whether {@code operator}, whose factory is of class {@code factory}, is an assigner. */
    static boolean isAssigner(
            Class<?> factory, StreamConfig operator, ClassLoader userCodeClassLoader) {
        if (factory.getName().equals(SQL_ASSIGNER_FACTORY)) {
            return true;
        }
        // assignTimestampsAndWatermarks: Flink's operator in a plain factory (only that class is
        // read, which holds no user function but the strategy); the SQL mini-batch assigner too
        if (factory != SimpleOperatorFactory.class) {
            return false;
        }
        Object assigner =
                operator.<SimpleOperatorFactory<?>>getStreamOperatorFactory(userCodeClassLoader)
                        .getOperator();
        return assigner instanceof TimestampsAndWatermarksOperator
                || assigner.getClass().getName().equals(SQL_PROCTIME_MINI_BATCH_ASSIGNER);
    }
}
