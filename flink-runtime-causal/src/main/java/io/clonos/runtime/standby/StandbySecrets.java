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

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.jobgraph.JobVertexID;

import javax.annotation.Nullable;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The secret of each standby attempt. A standby's requests reach the JobManager by the path that
 * REST clients' coordination requests take, and the scheduler cannot tell them apart; without a
 * secret, any REST client could read a task's checkpointed state (a state request) or make a
 * replacement restore from files of its choice (a forged list of local copies). So each standby
 * attempt is given a random secret of its own by an operator event, which reaches that task only,
 * and a request counts as its standby's only with that secret.
 */
@Internal
final class StandbySecrets {

    private final SecureRandom random = new SecureRandom();
    private final Map<String, ExecutionAttemptID> attempts = new ConcurrentHashMap<>();
    private final Map<ExecutionAttemptID, String> secrets = new ConcurrentHashMap<>();

    /** The secret of a standby attempt, made on the first call. */
    String of(ExecutionAttemptID attempt) {
        return secrets.computeIfAbsent(
                attempt,
                a -> {
                    byte[] bytes = new byte[24];
                    random.nextBytes(bytes);
                    String secret = HexFormat.of().formatHex(bytes);
                    attempts.put(secret, a);
                    return secret;
                });
    }

    /** The attempt of subtask {@code subtask} of {@code vertex} that {@code secret} is of. */
    Optional<ExecutionAttemptID> attemptOf(
            @Nullable String secret, JobVertexID vertex, int subtask) {
        ExecutionAttemptID attempt = secret == null ? null : attempts.get(secret);
        return attempt != null
                        && attempt.getJobVertexId().equals(vertex)
                        && attempt.getSubtaskIndex() == subtask
                ? Optional.of(attempt)
                : Optional.empty();
    }

    /** The attempt ended: its secret is of no use any more. */
    void forget(ExecutionAttemptID attempt) {
        String secret = secrets.remove(attempt);
        if (secret != null) {
            attempts.remove(secret);
        }
    }
}
