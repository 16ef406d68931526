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

package io.clonos.cli;

import io.clonos.nexmark.NexmarkCli;

import org.apache.flink.annotation.Internal;

import java.util.List;

/**
 * {@code bin/clonos nexmark ...}: the Nexmark harness's experiments, given this distribution's
 * clusters of separate processes ({@code --processes separate}) beside the harness's embedded ones.
 * The launcher depends on the harness, not the other way round: the harness never looks for what
 * the distribution provides. Runs with the harness's jars ({@code opt/nexmark}) next to Clonos's.
 */
@Internal
public final class NexmarkCommand {

    private NexmarkCommand() {}

    public static void main(String[] args) throws Exception {
        System.exit(NexmarkCli.run(args, List.of(new SeparateFailureClusters())));
    }
}
