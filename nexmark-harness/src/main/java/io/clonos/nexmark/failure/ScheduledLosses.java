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

package io.clonos.nexmark.failure;

import io.clonos.bench.report.FailurePlan;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;

import java.util.ArrayList;
import java.util.List;

/**
 * The losses of one run, as its {@link FailurePlan} schedules them: the TaskManagers of the lost
 * vertex's subtasks 0, 1, ..., the first at a given time and each next one the plan's spacing
 * later; losses due at the same time go together, from one view of the job.
 */
@Internal
final class ScheduledLosses {
    private final FailurePlan plan;
    private final String vertex;
    private final long firstAt;
    private int lost;
    private long firstLostAt = -1;

    ScheduledLosses(FailurePlan plan, String vertex, long firstAt) {
        this.plan = plan;
        this.vertex = vertex;
        this.firstAt = firstAt;
    }

    /** Whether the first loss is due at {@code now} and has not happened. */
    boolean firstDue(long now) {
        return lost == 0 && now >= firstAt;
    }

    /** Loses the TaskManagers due at {@code now}; returns them, none if nothing was due. */
    List<String> loseDue(FailureClusters.Cluster cluster, JobID job, long now) throws Exception {
        List<Integer> subtasks = new ArrayList<>();
        while (lost + subtasks.size() < plan.kills
                && now >= firstAt + plan.offsetMs(lost + subtasks.size())) {
            subtasks.add(lost + subtasks.size());
        }
        if (subtasks.isEmpty()) {
            return List.of();
        }
        FailureClusters.Lost victims = cluster.loseTaskManagersOf(job, vertex, subtasks);
        if (lost == 0) {
            firstLostAt = victims.at();
        }
        lost += subtasks.size();
        return victims.taskManagers();
    }

    /** When the first TaskManager was lost, -1 before. */
    long firstLostAt() {
        return firstLostAt;
    }

    /** Whether every loss of the plan happened. */
    boolean done() {
        return lost == plan.kills;
    }
}
