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

package io.clonos.nexmark.failure;

import org.apache.flink.annotation.Internal;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The jobs of the paper's failure experiment: Nexmark Q3 and Q8 (its Figure 6) and its synthetic
 * job (stateful stages without operator fusion, each a task of its own). Each names the operator
 * whose first subtask's TaskManager the experiment loses, and the prefix of its result files.
 */
@Internal
public enum FailureQuery {
    Q3("3", "q3", "Q3", "q3-join"),
    Q8("8", "q8", "Q8", "q8-join"),
    SYNTHETIC("synthetic", "synthetic", "the synthetic job", SyntheticStages.FIRST_STAGE);

    private final String option;
    private final String id;
    private final String title;
    private final String lostOperator;

    FailureQuery(String option, String id, String title, String lostOperator) {
        this.option = option;
        this.id = id;
        this.title = title;
        this.lostOperator = lostOperator;
    }

    /**
     * The job {@code --query} names: 3, 8 or synthetic.
     *
     * @throws IllegalArgumentException naming the allowed values
     */
    public static FailureQuery of(String option) {
        String value = option.trim().toLowerCase(Locale.ROOT);
        for (FailureQuery query : values()) {
            if (query.option.equals(value)) {
                return query;
            }
        }
        throw new IllegalArgumentException(
                "--query takes "
                        + Arrays.stream(values())
                                .map(q -> q.option)
                                .collect(Collectors.joining(", "))
                        + " (the paper's failure experiments), not "
                        + option
                        + ".");
    }

    /** The prefix of the result files, and part of each run's topic names. */
    public String id() {
        return id;
    }

    /** How progress lines and reports name the job. */
    public String title() {
        return title;
    }

    /** The operator whose first subtask's TaskManager is lost. */
    public String lostOperator() {
        return lostOperator;
    }

    /** The value of the summary's {@code query} field. */
    String json() {
        return this == SYNTHETIC ? "\"synthetic\"" : option;
    }
}
