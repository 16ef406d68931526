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

package io.clonos.streaming.source;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HeldRecordsTest {

    @Test
    void eachSplitGivesBackItsRecordsInItsOwnOrder() {
        HeldRecords<String> held = new HeldRecords<>();
        held.add("p1", "a", Long.MIN_VALUE, false);
        held.add("p2", "x", 7, true);
        held.add("p1", "b", 3, true);

        assertThat(held.size()).isEqualTo(3);
        assertThat(held.take("p1").record()).isEqualTo("a");
        HeldRecords.Held<String> x = held.take("p2");
        assertThat(x.record()).isEqualTo("x");
        assertThat(x.hasTimestamp()).isTrue();
        assertThat(x.timestamp()).isEqualTo(7);
        assertThat(held.has("p2")).isFalse();
        assertThat(held.take("p1").record()).isEqualTo("b");
        assertThat(held.isEmpty()).isTrue();
    }

    @Test
    void theSplitHeldLongestComesFirstAndAnEmptiedSplitGoesToTheBack() {
        HeldRecords<String> held = new HeldRecords<>();
        held.add("p3", "a", 0, false);
        held.add("p1", "b", 0, false);
        assertThat(held.firstSplit()).isEqualTo("p3");
        held.take("p3");
        held.add("p3", "c", 0, false);
        assertThat(held.firstSplit()).isEqualTo("p1");
        held.take("p1");
        held.take("p3");
        assertThat(held.firstSplit()).isNull();
    }

    @Test
    void takingFromASplitWithNothingHeldFails() {
        HeldRecords<String> held = new HeldRecords<>();
        held.add("p1", "a", 0, false);
        assertThatThrownBy(() -> held.take("p2"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("p2");
    }
}
