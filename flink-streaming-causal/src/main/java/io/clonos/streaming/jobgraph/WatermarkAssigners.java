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
 * ignore the watermarks of their input, generate their own from the records they see and a timer of
 * their own, and keep the generator's state in no checkpoint.
 */
final class WatermarkAssigners {

    private WatermarkAssigners() {}

    /** Whether {@code operator}, whose factory is of class {@code factory}, is an assigner. */
    static boolean isAssigner(
            Class<?> factory, StreamConfig operator, ClassLoader userCodeClassLoader) {
        // assignTimestampsAndWatermarks: Flink's operator in a plain factory (only that class is
        // read, which holds no user function but the strategy)
        return factory == SimpleOperatorFactory.class
                && operator.<SimpleOperatorFactory<?>>getStreamOperatorFactory(userCodeClassLoader)
                                .getOperator()
                        instanceof TimestampsAndWatermarksOperator;
    }
}
