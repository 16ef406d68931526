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

package io.clonos.runtime.jobgraph;

import io.clonos.runtime.configuration.ClonosConfiguration;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.jobgraph.JobGraph;

/**
 * Rewrites a submitted job so that it runs on Clonos. Rewriting happens on the JobManager, after
 * submission, so that every client (the Flink CLI, the REST API, Beam's Flink runner, application
 * mode) submits jobs unchanged.
 *
 * <p>Implementations are found with {@link java.util.ServiceLoader}; the task side ({@code
 * flink-streaming-causal}) contributes the rewriter that swaps Flink's stream tasks for Clonos's. A
 * rewriter must be idempotent: a recovered JobManager rewrites the stored job again.
 */
@Internal
public interface JobGraphRewriter {

    void rewrite(JobGraph jobGraph, ClonosConfiguration clonos, ClassLoader userCodeClassLoader)
            throws Exception;
}
