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

package io.clonos.runtime.protocol;

import org.apache.flink.annotation.Internal;

/**
 * The sending attempt, a restarted task, replayed what its predecessor had done and now runs
 * normally, so checkpoints held back for its replay may resume. Only the attempts the JobManager
 * waits for count; the attempt is the one Flink names as the sender.
 */
@Internal
public record ReplayEndReport() implements TaskReport {

    private static final long serialVersionUID = 1L;
}
