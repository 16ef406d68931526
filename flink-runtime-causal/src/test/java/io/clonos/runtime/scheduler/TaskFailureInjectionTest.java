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

package io.clonos.runtime.scheduler;

import org.apache.flink.util.FlinkException;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** How a failure request names the task to fail. */
class TaskFailureInjectionTest {

    private static final List<String> VERTICES =
            List.of("Source: numbers -> tag", "keyed -> Sink: results", "map");

    @Test
    void aVertexIsNamedAsTheWebUiShowsItOrByAnOperatorChainedInIt() throws Exception {
        assertThat(
                        TaskFailureInjection.named(
                                VERTICES, Function.identity(), "Source: numbers -> tag"))
                .isEqualTo("Source: numbers -> tag");
        assertThat(TaskFailureInjection.named(VERTICES, Function.identity(), "numbers"))
                .isEqualTo("Source: numbers -> tag");
        assertThat(TaskFailureInjection.named(VERTICES, Function.identity(), "Source: numbers"))
                .isEqualTo("Source: numbers -> tag");
        assertThat(TaskFailureInjection.named(VERTICES, Function.identity(), "results"))
                .isEqualTo("keyed -> Sink: results");
        assertThat(TaskFailureInjection.named(VERTICES, Function.identity(), "map"))
                .isEqualTo("map");
    }

    /** Flink names the sources chained to an operator of several inputs after it, in brackets. */
    @Test
    void aVertexWithChainedSourcesIsNamedByItsOperator() throws Exception {
        List<String> vertices = List.of("Source: third", "merge [Source: a, Source: b] -> sink");
        assertThat(TaskFailureInjection.named(vertices, Function.identity(), "merge"))
                .isEqualTo("merge [Source: a, Source: b] -> sink");
        assertThat(TaskFailureInjection.named(vertices, Function.identity(), "sink"))
                .isEqualTo("merge [Source: a, Source: b] -> sink");
        assertThatThrownBy(() -> TaskFailureInjection.named(vertices, Function.identity(), "a"))
                .isInstanceOf(FlinkException.class);
    }

    @Test
    void aNameOfNoVertexListsTheJobsVertices() {
        assertThatThrownBy(() -> TaskFailureInjection.named(VERTICES, Function.identity(), "numb"))
                .isInstanceOf(FlinkException.class)
                .hasMessage(
                        "No vertex 'numb'; the job has: [Source: numbers -> tag, keyed -> Sink: results, map]");
    }
}
