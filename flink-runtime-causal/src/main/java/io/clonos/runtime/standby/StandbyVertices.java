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

import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.jobgraph.JobGraphRewriter;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.jobmanager.scheduler.SlotSharingGroup;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * With {@code clonos.standby.enabled}, adds to a job one standby vertex per vertex that runs a
 * Clonos task: {@code clonos.standby.count} {@link StandbyTask}s per subtask, in a slot-sharing
 * group of their own (the standbys of the subtasks that share a primary slot share a standby slot).
 * Standby subtask {@code j} stands by for primary subtask {@code j % parallelism}. Flink deploys
 * and restarts them like any task; each is a pipelined region of its own.
 */
@Internal
public final class StandbyVertices implements JobGraphRewriter {

    static final ConfigOption<String> STANDBY_OF =
            ConfigOptions.key("clonos.internal.standby-of")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("Internal: the vertex a standby vertex stands by for.");

    /** What a standby vertex's name starts with, before its primary's name. */
    public static final String NAME_PREFIX = "Standby: ";

    @Override
    public void rewrite(
            JobGraph jobGraph, ClonosConfiguration clonos, ClassLoader userCodeClassLoader) {
        if (!clonos.isStandbyEnabled()) {
            return;
        }
        List<JobVertex> primaries = new ArrayList<>();
        for (JobVertex vertex : jobGraph.getVertices()) {
            if (primaryOf(vertex).isPresent()) {
                // rewritten before
                return;
            }
            if (vertex.getInvokableClassName().startsWith("io.clonos.")) {
                primaries.add(vertex);
            }
        }
        SlotSharingGroup standbys = new SlotSharingGroup();
        for (JobVertex primary : primaries) {
            JobVertex standby = new JobVertex(NAME_PREFIX + primary.getName());
            standby.setInvokableClass(StandbyTask.class);
            int parallelism = primary.getParallelism() * clonos.getStandbyCount();
            standby.setParallelism(parallelism);
            standby.setMaxParallelism(parallelism);
            standby.setSlotSharingGroup(standbys);
            standby.getConfiguration().set(STANDBY_OF, primary.getID().toHexString());
            jobGraph.addVertex(standby);
        }
    }

    /** The vertex {@code vertex} stands by for; empty when it is no standby vertex. */
    public static Optional<JobVertexID> primaryOf(JobVertex vertex) {
        return vertex.getConfiguration().getOptional(STANDBY_OF).map(JobVertexID::fromHexString);
    }

    /** The job's standby vertices. */
    public static Set<JobVertexID> standbyVertices(JobGraph jobGraph) {
        Set<JobVertexID> standbys = new HashSet<>();
        for (JobVertex vertex : jobGraph.getVertices()) {
            if (primaryOf(vertex).isPresent()) {
                standbys.add(vertex.getID());
            }
        }
        return standbys;
    }

    /** The primary subtask a standby subtask stands by for. */
    public static int primarySubtask(int standbySubtask, int primaryParallelism) {
        return standbySubtask % primaryParallelism;
    }
}
