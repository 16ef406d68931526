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

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class SqlKafkaJobTest {

    /** Key 1 had ids 3, 5 and 9: its updates are (1, 3), (2, 8), (3, 17). */
    private static final Map<Long, List<Long>> IDS = Map.of(1L, List.of(3L, 5L, 9L));

    @Test
    void eachCountOnceWithItsSumIsExactlyOnce() {
        assertThat(SqlKafkaJob.violations(Map.of(1L, updates(1, 3, 2, 8, 3, 17)), IDS)).isEmpty();
    }

    @Test
    void aRepeatedUpdateIsReported() {
        assertThat(SqlKafkaJob.violations(Map.of(1L, updates(1, 3, 2, 8, 2, 8, 3, 17)), IDS))
                .containsExactly("key 1: count 2 where 3 was next (repeated)");
    }

    @Test
    void aLostUpdateAndALostEndAreReported() {
        assertThat(SqlKafkaJob.violations(Map.of(1L, updates(1, 3, 3, 17)), IDS))
                .containsExactly("key 1: count 3 where 2 was next (lost)");
        assertThat(SqlKafkaJob.violations(Map.of(1L, updates(1, 3, 2, 8)), IDS))
                .containsExactly("key 1: last count 2 of 3 rows");
        assertThat(SqlKafkaJob.violations(Map.of(), IDS))
                .containsExactly("key 1: last count 0 of 3 rows");
    }

    @Test
    void aWrongSumOrAnUnknownCountIsReported() {
        assertThat(SqlKafkaJob.violations(Map.of(1L, updates(1, 3, 2, 9, 3, 17)), IDS))
                .containsExactly("key 1: sum 9 at count 2, expected 8");
        assertThat(SqlKafkaJob.violations(Map.of(1L, updates(1, 3, 2, 8, 3, 17, -1, 0)), IDS))
                .containsExactly("key 1: count -1 of 3 rows");
    }

    private static List<long[]> updates(long... countsAndSums) {
        List<long[]> updates = new ArrayList<>();
        for (int i = 0; i < countsAndSums.length; i += 2) {
            updates.add(new long[] {countsAndSums[i], countsAndSums[i + 1]});
        }
        return updates;
    }
}
