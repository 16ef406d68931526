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

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The stage kinds of event time: where an assigner and a window stage may stand. */
class ShapeTest {

    @Test
    void anAssignerStandsBehindAnyUnkeyedEdgeAndAWindowBehindAKeyBy() {
        Shape shape = Shape.parse(2, "forward:assign:2/keyby:window:2/rebalance:assign:3");
        assertThat(shape.stages)
                .extracting(stage -> stage.kind)
                .containsExactly(Shape.Kind.ASSIGN, Shape.Kind.WINDOW, Shape.Kind.ASSIGN);
        assertThat(shape.toString())
                .isEqualTo("source:2/forward:assign:2/keyby:window:2/rebalance:assign:3/chain:3");
    }

    @Test
    void aWindowStageReadsAKeyByEdgeOnly() {
        assertThatThrownBy(() -> Shape.parse(2, "union:window:2"))
                .hasMessageContaining("a window stage reads a keyBy edge");
        assertThatThrownBy(() -> Shape.parse(2, "keyby:assign:2"))
                .hasMessageContaining("stateful stages are keyed, stateless ones are not");
    }

    @Test
    void aWindowStageCannotFollowProcessingTimeTimers() {
        assertThatThrownBy(() -> Shape.parse(2, "keyby:timers:2/keyby:window:2"))
                .hasMessageContaining("processing-time timers");
    }

    @Test
    void randomShapesDrawNoWindowBehindProcessingTimeTimers() {
        for (long seed = 0; seed < 500; seed++) {
            // the constructor refuses such a shape
            Shape shape = Shape.random(seed, 7, 4);
            assertThat(shape.depth()).isBetween(2, 7);
        }
    }
}
