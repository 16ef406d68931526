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

package io.clonos.runtime.network;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

class AvailabilityUnionTest {

    @Test
    void anIdleGateAskedOverAndOverHangsOneDependentOnEachFuture() {
        CompletableFuture<Void> data = new CompletableFuture<>();
        CompletableFuture<Void> abort = new CompletableFuture<>();
        AvailabilityUnion union = new AvailabilityUnion();

        CompletableFuture<?> first = union.of(List.of(data, abort));
        for (int i = 0; i < 100_000; i++) {
            assertThat(union.of(List.of(data, abort))).isSameAs(first);
        }

        assertThat(data.getNumberOfDependents()).isEqualTo(1);
        assertThat(abort.getNumberOfDependents()).isEqualTo(1);
        abort.complete(null);
        assertThat(first).isDone();
    }

    @Test
    void aNewFutureOrACompletedUnionMakesANewUnion() {
        CompletableFuture<Void> data = new CompletableFuture<>();
        CompletableFuture<Void> abort = new CompletableFuture<>();
        AvailabilityUnion union = new AvailabilityUnion();
        CompletableFuture<?> first = union.of(List.of(data, abort));

        CompletableFuture<Void> nextData = new CompletableFuture<>();
        CompletableFuture<?> second = union.of(List.of(nextData, abort));
        assertThat(second).isNotSameAs(first);
        nextData.complete(null);
        assertThat(second).isDone();
        assertThat(first).as("the union of the futures it was made of").isNotDone();

        CompletableFuture<Void> laterData = new CompletableFuture<>();
        CompletableFuture<?> third = union.of(List.of(laterData, abort));
        assertThat(third).isNotDone();
        abort.complete(null);
        assertThat(third).isDone();
        assertThat(first).isDone();
    }
}
