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

package io.clonos.beam;

import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricResults;
import org.joda.time.Duration;

import javax.annotation.Nullable;

import java.io.IOException;

/** Beam's Flink runner's result; stops the embedded Clonos cluster, if any, once the job ended. */
final class ClonosPipelineResult implements PipelineResult {

    private final PipelineResult flink;
    @Nullable private EmbeddedClonosCluster embedded;

    ClonosPipelineResult(PipelineResult flink, @Nullable EmbeddedClonosCluster embedded) {
        this.flink = flink;
        this.embedded = embedded;
        stopIfEnded(flink.getState());
    }

    @Override
    public State getState() {
        return stopIfEnded(flink.getState());
    }

    @Override
    public State cancel() throws IOException {
        return stopIfEnded(flink.cancel());
    }

    @Override
    public State waitUntilFinish(Duration duration) {
        return stopIfEnded(flink.waitUntilFinish(duration));
    }

    @Override
    public State waitUntilFinish() {
        return stopIfEnded(flink.waitUntilFinish());
    }

    @Override
    public MetricResults metrics() {
        return flink.metrics();
    }

    private synchronized State stopIfEnded(State state) {
        if (embedded != null && state != null && state.isTerminal()) {
            try {
                embedded.close();
            } catch (Exception e) {
                throw new IllegalStateException("Cannot stop the embedded Clonos cluster", e);
            } finally {
                embedded = null;
            }
        }
        return state;
    }
}
