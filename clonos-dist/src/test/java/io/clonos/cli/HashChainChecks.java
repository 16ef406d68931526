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
package io.clonos.cli;

import io.clonos.examples.CommittedLinesSink;
import io.clonos.examples.HashChainJob;
import io.clonos.examples.HashChains;

import java.io.IOException;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** Checks of what {@link HashChainJob} committed. */
final class HashChainChecks {

    private HashChainChecks() {}

    /** Every input of the job's {@code count} took effect once, in unbroken chains. */
    static void assertExactlyOnce(Path output, long count) throws IOException {
        assertThat(
                        HashChains.violations(
                                CommittedLinesSink.committedLines(output),
                                HashChainJob.sources(),
                                count))
                .as("broken, lossy or repeated hash chains")
                .isEmpty();
    }
}
