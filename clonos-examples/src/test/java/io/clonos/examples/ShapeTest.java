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

/**
 * The stage kinds of event time and of SQL: where an assigner, a window and a SQL stage may stand,
 * and that random shapes draw them.
 */
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
    void aSqlStageIsStatelessAndStandsBehindAnyUnkeyedEdge() {
        Shape shape = Shape.parse(2, "forward:sql:2/broadcast:sql:3/rescale:sql:1");
        assertThat(shape.stages).extracting(stage -> stage.kind).containsOnly(Shape.Kind.SQL);
        assertThatThrownBy(() -> Shape.parse(2, "keyby:sql:2"))
                .hasMessageContaining("stateful stages are keyed, stateless ones are not");
    }

    @Test
    void aStageBehindAForwardEdgeChainsButBehindAWindowsUnion() {
        Shape shape = Shape.parse(2, "rebalance:sql:2/forward:sql:2/keyby:window:2/forward:map:2");
        // source, stages 1 and 2 (chained), stage 3 (windows), stage 4 (behind their union), chain
        assertThat(shape.vertices()).hasSize(5);
        assertThat(
                        shape.vertexOf(
                                "stage1-sql-in -> *anonymous_datastream_source$1*[1] -> Calc[2]"
                                        + " -> TableToDataSteam -> stage1-sql -> stage2-sql-in -> stage2-sql"))
                .isEqualTo(1);
        assertThat(shape.vertexOf("stage3-window -> stage3-window-late")).isEqualTo(2);
        assertThat(shape.vertexOf("stage4-map")).isEqualTo(3);
    }

    @Test
    void randomShapesDrawEveryKind() {
        java.util.Set<Shape.Kind> drawn = java.util.EnumSet.noneOf(Shape.Kind.class);
        for (long seed = 0; seed < 500; seed++) {
            Shape.random(seed, 7, 4).stages.forEach(stage -> drawn.add(stage.kind));
        }
        assertThat(drawn).containsExactlyInAnyOrder(Shape.Kind.values());
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
