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

package io.clonos.bench.experiment;

import org.apache.flink.annotation.Internal;

import java.nio.file.Path;

/**
 * The knobs of a benchmark that runs the synthetic job and kills a TaskManager under it ({@code
 * bench recovery}, {@code bench standby}); each benchmark has its own defaults.
 */
@Internal
public final class KillSettings {
    public long records;
    public int rate;
    public int keys;
    public int parallelism = 2;
    public int stateBytesPerKey;
    public long checkpointIntervalMs;
    public long killAfterMs;

    /**
     * Where checkpoints go (bench standby): a file system URI, each run in a directory of its own
     * under it; null for a local temporary directory.
     */
    public String checkpointDir;

    /** How often each variant runs (bench standby; bench recovery runs each once). */
    public int repetitions = 1;

    public Path output;

    KillSettings(
            long records,
            int rate,
            int keys,
            int stateBytesPerKey,
            long checkpointIntervalMs,
            long killAfterMs,
            Path output) {
        this.records = records;
        this.rate = rate;
        this.keys = keys;
        this.stateBytesPerKey = stateBytesPerKey;
        this.checkpointIntervalMs = checkpointIntervalMs;
        this.killAfterMs = killAfterMs;
        this.output = output;
    }
}
