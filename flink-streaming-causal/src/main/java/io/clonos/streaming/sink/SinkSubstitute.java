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

package io.clonos.streaming.sink;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.connector.sink2.Sink;

import java.util.Objects;
import java.util.Optional;

/**
 * A {@link SinkSubstitution}'s answer for a sink it knows: the determinant-holding sink that runs
 * in its place, or why the job keeps the sink as it is (said at submission, never silently).
 */
@PublicEvolving
public final class SinkSubstitute {

    private final Sink<?> substitute;
    private final String whyKept;

    private SinkSubstitute(Sink<?> substitute, String whyKept) {
        this.substitute = substitute;
        this.whyKept = whyKept;
    }

    /** {@code substitute} runs in the place of the sink. */
    public static <S extends Sink<?> & DeterminantHoldingSink> SinkSubstitute servedBy(
            S substitute) {
        return new SinkSubstitute(Objects.requireNonNull(substitute), null);
    }

    /** The job keeps its sink, for the reason {@code why}. */
    public static SinkSubstitute kept(String why) {
        return new SinkSubstitute(null, Objects.requireNonNull(why));
    }

    /** The sink that runs in the place of the job's; empty when the job keeps its own. */
    public Optional<Sink<?>> substitute() {
        return Optional.ofNullable(substitute);
    }

    /** Why the job keeps its sink; empty when it is substituted. */
    public Optional<String> whyKept() {
        return Optional.ofNullable(whyKept);
    }

    @Override
    public String toString() {
        return substitute != null ? "served by " + substitute : "kept: " + whyKept;
    }
}
