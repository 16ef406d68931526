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

package io.clonos.runtime.dispatcher;

import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.jobgraph.AlignedCheckpointsRewriter;
import io.clonos.runtime.jobgraph.JobGraphRewriter;
import io.clonos.runtime.standby.StandbyVertices;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.jobgraph.JobGraph;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * All {@link JobGraphRewriter}s of a Clonos JobManager, in a fixed order: Clonos's own, then those
 * found on the class path. Loading fails when the task side is missing, since a job that silently
 * ran on Flink's tasks would have no Clonos protection at all.
 */
@Internal
public final class JobGraphRewriters {

    private final List<JobGraphRewriter> rewriters;

    private JobGraphRewriters(List<JobGraphRewriter> rewriters) {
        this.rewriters = rewriters;
    }

    public static JobGraphRewriters load() {
        List<JobGraphRewriter> discovered = new ArrayList<>();
        ServiceLoader.load(JobGraphRewriter.class, JobGraphRewriters.class.getClassLoader())
                .forEach(discovered::add);
        if (discovered.isEmpty()) {
            throw new IllegalStateException(
                    "No "
                            + JobGraphRewriter.class.getSimpleName()
                            + " on the class path: the Clonos"
                            + " JobManager needs flink-streaming-causal in its lib/ directory.");
        }
        List<JobGraphRewriter> all = new ArrayList<>();
        all.add(new AlignedCheckpointsRewriter());
        all.addAll(discovered);
        // after the task side named its tasks: standbys stand by for Clonos tasks
        all.add(new StandbyVertices());
        return new JobGraphRewriters(all);
    }

    public void rewrite(
            JobGraph jobGraph, ClonosConfiguration clonos, ClassLoader userCodeClassLoader)
            throws Exception {
        for (JobGraphRewriter rewriter : rewriters) {
            rewriter.rewrite(jobGraph, clonos, userCodeClassLoader);
        }
    }
}
