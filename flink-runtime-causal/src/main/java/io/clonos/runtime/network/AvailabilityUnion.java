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

import org.apache.flink.annotation.Internal;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The future that completes when any of a gate's futures does, made once per set of futures.
 *
 * <p>A task asks an idle gate whether it is available each time it reads a record from another
 * input (a side input that has no more to say, beside a main input that flows). A fresh {@link
 * CompletableFuture#anyOf} per question hangs one more dependent on each of the gate's futures, and
 * those that seldom complete (a producer's restart, a checkpoint's abort, a change of the recovery)
 * gather millions of them within minutes: the heap fills, and the thread that finally completes one
 * (the TaskManager's RPC thread, for an abort) walks them all for minutes while heartbeats time
 * out. So the union is kept while it is pending and its futures are the same ones.
 *
 * <p>Task thread only.
 */
@Internal
final class AvailabilityUnion {

    private CompletableFuture<?>[] sources = new CompletableFuture<?>[0];
    private CompletableFuture<?> union = CompletableFuture.completedFuture(null);

    /** A future that completes when any of {@code futures} does. */
    CompletableFuture<?> of(List<CompletableFuture<?>> futures) {
        if (union.isDone() || !sameAs(futures)) {
            sources = futures.toArray(new CompletableFuture<?>[0]);
            union = CompletableFuture.anyOf(sources);
        }
        return union;
    }

    private boolean sameAs(List<CompletableFuture<?>> futures) {
        if (futures.size() != sources.length) {
            return false;
        }
        for (int i = 0; i < sources.length; i++) {
            if (futures.get(i) != sources[i]) {
                return false;
            }
        }
        return true;
    }
}
