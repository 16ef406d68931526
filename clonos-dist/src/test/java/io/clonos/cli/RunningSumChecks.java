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

import io.clonos.runtime.rest.ClusterRestClient;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/** Checks shared by the tests that run the example job on a real cluster. */
final class RunningSumChecks {

    private RunningSumChecks() {}

    /** Key -> {count, sum} of 1..count by n % keys, summed the plain way. */
    static Map<Long, long[]> expected(long count, int keys) {
        Map<Long, long[]> expected = new TreeMap<>();
        for (long n = 1; n <= count; n++) {
            long[] total = expected.computeIfAbsent(n % keys, k -> new long[2]);
            total[0]++;
            total[1] += n;
        }
        return expected;
    }

    static void assertComplete(Path output, long count, int keys) throws IOException {
        Map<Long, RunningSumOutput.KeyTotal> actual = RunningSumOutput.finalTotals(output);
        Map<Long, long[]> expected = expected(count, keys);
        assertThat(actual.keySet()).isEqualTo(expected.keySet());
        expected.forEach(
                (key, total) -> {
                    assertThat(actual.get(key).count)
                            .as("count of key %d", key)
                            .isEqualTo(total[0]);
                    assertThat(actual.get(key).sum).as("sum of key %d", key).isEqualTo(total[1]);
                });
    }

    /**
     * Waits until every subtask of every vertex of a running job reports a {@code clonos.epoch} of
     * at least 1, i.e. runs on a Clonos task that has started a checkpoint.
     */
    static void awaitEpochOnEverySubtask(ClusterRestClient rest, String jobId, Duration timeout)
            throws Exception {
        Instant deadline = Instant.now().plus(timeout);
        String missing = "no answer";
        while (Instant.now().isBefore(deadline)) {
            JsonNode job = rest.get("/jobs/" + jobId);
            if (!"RUNNING".equals(job.path("state").asText())) {
                fail(
                        "The job left RUNNING ("
                                + job.path("state").asText()
                                + ") before every subtask reported clonos.epoch; last missing: "
                                + missing);
            }
            missing = null;
            for (JsonNode vertex : job.path("vertices")) {
                for (int i = 0; i < vertex.path("parallelism").asInt() && missing == null; i++) {
                    long epoch =
                            rest.subtaskMetric(jobId, vertex.path("id").asText(), i, "clonos.epoch")
                                    .map(Long::parseLong)
                                    .orElse(0L);
                    if (epoch < 1) {
                        missing = vertex.path("name").asText() + "[" + i + "] epoch " + epoch;
                    }
                }
            }
            if (missing == null) {
                return;
            }
            Thread.sleep(200);
        }
        fail("Not every subtask reported clonos.epoch >= 1 in time; missing: " + missing);
    }

    static String awaitTerminal(ClusterRestClient rest, String jobId, Duration timeout)
            throws Exception {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            String state = rest.jobState(jobId).orElse("UNKNOWN");
            if (state.equals("FINISHED") || state.equals("FAILED") || state.equals("CANCELED")) {
                return state;
            }
            Thread.sleep(200);
        }
        return fail("Job " + jobId + " did not finish in time");
    }
}
