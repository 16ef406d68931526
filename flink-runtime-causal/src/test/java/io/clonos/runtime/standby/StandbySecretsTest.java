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

package io.clonos.runtime.standby;

import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.executiongraph.ExecutionGraphID;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.runtime.state.PhysicalStateHandleID;
import org.apache.flink.runtime.state.StateHandleID;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Standby requests count only with their attempt's secret and their own directory's copies. */
class StandbySecretsTest {

    private final JobVertexID vertex = new JobVertexID();
    private final ExecutionGraphID graph = new ExecutionGraphID();

    private ExecutionAttemptID attempt(JobVertexID vertex, int subtask, int number) {
        return new ExecutionAttemptID(graph, new ExecutionVertexID(vertex, subtask), number);
    }

    @Test
    void aSecretNamesItsAttemptForItsOwnSubtaskOnly() {
        StandbySecrets secrets = new StandbySecrets();
        ExecutionAttemptID first = attempt(vertex, 1, 0);
        ExecutionAttemptID second = attempt(vertex, 1, 1);
        String secret = secrets.of(first);

        assertThat(secrets.of(first)).as("one secret per attempt").isEqualTo(secret);
        assertThat(secrets.of(second)).isNotEqualTo(secret).hasSizeGreaterThanOrEqualTo(32);
        assertThat(secrets.attemptOf(secret, vertex, 1)).contains(first);
        assertThat(secrets.attemptOf(secret, vertex, 0)).as("another subtask").isEmpty();
        assertThat(secrets.attemptOf(secret, new JobVertexID(), 1)).as("another vertex").isEmpty();
        assertThat(secrets.attemptOf(null, vertex, 1)).isEmpty();
        assertThat(secrets.attemptOf("0".repeat(48), vertex, 1)).as("a guess").isEmpty();

        secrets.forget(first);
        assertThat(secrets.attemptOf(secret, vertex, 1)).as("after the attempt ended").isEmpty();
        assertThat(secrets.attemptOf(secrets.of(second), vertex, 1)).contains(second);
    }

    @Test
    void copiesCountOnlyInTheirAttemptsOwnDirectory() {
        String job = "0123456789abcdef0123456789abcdef";
        String own = StandbyTask.directoryName(vertex, 1, 2);
        String root = "/tmp/x/" + StandbyTask.DIRECTORY + "/" + job + "/";

        assertThat(copies(root + own + "/17/a.sst").liesIn(job, own)).isTrue();
        assertThat(copies(root + StandbyTask.directoryName(vertex, 1, 1) + "/a").liesIn(job, own))
                .as("an earlier attempt's")
                .isFalse();
        assertThat(copies(root + own + "/../../../../etc/passwd").liesIn(job, own))
                .as("out by ..")
                .isFalse();
        assertThat(copies("/etc/passwd").liesIn(job, own)).isFalse();
        assertThat(
                        copies("x/" + StandbyTask.DIRECTORY + "/" + job + "/" + own + "/a")
                                .liesIn(job, own))
                .as("a relative path")
                .isFalse();
        assertThat(copies(root.replace(job, "f".repeat(32)) + own + "/a").liesIn(job, own))
                .as("another job's")
                .isFalse();
        assertThat(
                        new LocalCopies(Map.of(), Map.of(new StateHandleID("db"), "/var/db"))
                                .liesIn(job, own))
                .as("a database elsewhere")
                .isFalse();
        assertThat(LocalCopies.NONE.liesIn(job, own)).isTrue();
    }

    private static LocalCopies copies(String path) {
        PhysicalStateHandleID id = new PhysicalStateHandleID(path);
        return new LocalCopies(Map.of(id, new LocalStateFile(path, id, 1)), Map.of());
    }
}
