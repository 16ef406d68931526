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
import org.apache.flink.runtime.jobgraph.OperatorID;

/**
 * Where Clonos's scheduler takes messages: an operator id that no job has, to which tasks send
 * their reports ({@link TaskReport}, as operator events) and REST clients their requests ({@link
 * FailTaskRequest}, as coordination requests). The scheduler answers what is sent here itself; no
 * operator coordinator sees it.
 */
@Internal
public final class SchedulerEndpoint {

    /** The operator id of Clonos's scheduler. */
    public static final OperatorID OPERATOR_ID = new OperatorID(0xC1050_5L, 0xFA11_7A5L);

    private SchedulerEndpoint() {}
}
