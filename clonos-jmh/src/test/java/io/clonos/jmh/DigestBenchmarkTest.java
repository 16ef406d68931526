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

package io.clonos.jmh;

import io.clonos.runtime.network.DigestBenchmark;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The digest benchmark digests every byte of its buffer. */
class DigestBenchmarkTest {

    @Test
    void eachOperationDigestsTheWholeBuffer() {
        DigestBenchmark benchmark = new DigestBenchmark();
        benchmark.bufferBytes = 4096;
        benchmark.setUp();
        long first = benchmark.digestOneBuffer();
        long second = benchmark.digestOneBuffer();
        assertThat(second).isNotEqualTo(first);
        assertThat(benchmark.digestedBytes()).isEqualTo(2 * 4096);
        benchmark.tearDown();
    }
}
