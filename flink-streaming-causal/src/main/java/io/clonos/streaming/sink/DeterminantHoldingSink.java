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

/**
 * A sink that stores its task's determinants beside its output in the system it writes to, and
 * reads them back when the task recovers (section 5.5 of the Clonos paper): the external system is
 * then the last downstream holder of the task's determinants, so the sink may make its output
 * visible at once and a recovered sink reproduces, and skips, what its predecessor published.
 *
 * <p>The rewriting at submission marks the vertex of such a sink, and the recovery of its task
 * waits for the sink's answer ({@code CausalTask#answeredByExternalHolder}) as for a consumer's. A
 * sink that implements this must answer whenever its writer is created in a task attempt after the
 * first, or the recovery waits until {@code clonos.recovery.reconnect-timeout}.
 */
@PublicEvolving
public interface DeterminantHoldingSink {}
