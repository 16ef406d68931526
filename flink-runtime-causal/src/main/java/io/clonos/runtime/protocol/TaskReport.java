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
import org.apache.flink.runtime.operators.coordination.OperatorEvent;

/**
 * What a task tells the JobManager's scheduler, with no answer expected. A report travels as an
 * operator event addressed to {@link SchedulerEndpoint#OPERATOR_ID}: that path leads from a task's
 * TaskManager over Flink's RPC, and Flink names the attempt that sent it. A REST client cannot send
 * one: Flink's REST API takes coordination requests only, and a report is not one.
 *
 * <p>A report that cannot be delivered is not repeated: each has a slower fallback (heartbeats for
 * a lost TaskManager, the checkpoint pause's limit for a replay's end).
 */
@Internal
public sealed interface TaskReport extends OperatorEvent
        permits LostTaskManagerReport, ReplayEndReport {}
