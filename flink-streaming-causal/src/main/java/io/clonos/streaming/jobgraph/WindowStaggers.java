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
import org.apache.flink.streaming.api.operators.SimpleUdfStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.streaming.api.windowing.assigners.ClonosWindowStaggerPatch;
import org.apache.flink.streaming.api.windowing.assigners.ClonosWindowStaggerPatch.Stagger;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.runtime.operators.windowing.WindowOperator;

import java.util.Optional;

/**
 * The stagger offsets of a job's window operators, which Flink's tumbling assigners choose at a
 * task's first element ({@link ClonosWindowStaggerPatch}): an aligned one is set before the job
 * runs; one chosen by the time or at random cannot be replayed.
 */
final class WindowStaggers {

    private WindowStaggers() {}

    /** The operator's factory with its aligned stagger set, if it is a window operator's. */
    static Optional<StreamOperatorFactory<?>> aligned(
            StreamConfig operator, ClassLoader userCodeClassLoader) {
        return windowOperator(operator, userCodeClassLoader)
                .filter(factory -> staggerOf(factory) == Stagger.ALIGNED)
                .map(
                        factory -> {
                            ClonosWindowStaggerPatch.fixAlignedStagger(assignerOf(factory));
                            return factory;
                        });
    }

    /** Why the operator cannot be replayed, if its windows are staggered at the first element. */
    static Optional<String> notReplayableBecause(
            StreamConfig operator, ClassLoader userCodeClassLoader) {
        return windowOperator(operator, userCodeClassLoader)
                .filter(factory -> staggerOf(factory) == Stagger.CHOSEN_AT_FIRST_ELEMENT)
                .map(
                        factory ->
                                "its window operator "
                                        + operator.getOperatorName()
                                        + " staggers its windows by an offset its task chooses at its first element (WindowStagger.RANDOM or NATURAL), which no checkpoint holds");
    }

    private static Stagger staggerOf(SimpleUdfStreamOperatorFactory<?> factory) {
        return ClonosWindowStaggerPatch.staggerOf(assignerOf(factory));
    }

    private static WindowAssigner<?, ?> assignerOf(SimpleUdfStreamOperatorFactory<?> factory) {
        return ((WindowOperator<?, ?, ?, ?, ?>) factory.getOperator()).getWindowAssigner();
    }

    private static Optional<SimpleUdfStreamOperatorFactory<?>> windowOperator(
            StreamConfig operator, ClassLoader userCodeClassLoader) {
        Class<?> factoryClass = operator.getStreamOperatorFactoryClass(userCodeClassLoader);
        if (factoryClass != SimpleUdfStreamOperatorFactory.class) {
            return Optional.empty();
        }
        SimpleUdfStreamOperatorFactory<?> factory =
                operator.getStreamOperatorFactory(userCodeClassLoader);
        return factory.getOperator() instanceof WindowOperator
                ? Optional.of(factory)
                : Optional.empty();
    }
}
