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

package io.clonos.runtime.scheduler;

import io.clonos.runtime.standby.StandbyActivations;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.JobException;
import org.apache.flink.runtime.executiongraph.Execution;
import org.apache.flink.runtime.scheduler.ExecutionOperations;

import java.util.concurrent.CompletableFuture;

/**
 * Flink's execution operations; an activated standby's replacement reads its state from the
 * standby's copies.
 */
@Internal
final class StandbyExecutionOperations implements ExecutionOperations {

    private final ExecutionOperations flink;
    private final StandbyActivations activations;

    StandbyExecutionOperations(ExecutionOperations flink, StandbyActivations activations) {
        this.flink = flink;
        this.activations = activations;
    }

    @Override
    public void deploy(Execution execution) throws JobException {
        activations.localize(execution);
        flink.deploy(execution);
    }

    @Override
    public CompletableFuture<?> cancel(Execution execution) {
        return flink.cancel(execution);
    }

    @Override
    public void markFailed(Execution execution, Throwable cause) {
        flink.markFailed(execution, cause);
    }
}
