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

import io.clonos.runtime.rest.ClusterRestClient;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Clonos image without a container runtime ({@link ImageTree}): runs the image's entrypoint
 * roles as the containers of a session cluster would (one JobManager, two TaskManagers, each in the
 * foreground), submits the hash-chain job through the entrypoint and checks it ran exactly once.
 * What it cannot check: the base image itself.
 */
class ImageLayoutIT {

    private static final long COUNT = 3_000;

    /** Kept when the test fails: the processes' logs say why. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path work;

    private ImageTree image;

    @AfterEach
    void stopContainers() throws Exception {
        if (image != null) {
            image.close();
        }
    }

    @Test
    void theImagesEntrypointRunsASessionClusterThatRunsAJob() throws Exception {
        image = ImageTree.layOut(work);
        assertThat(image.entrypoint).isExecutable();
        assertThat(image.home.resolve("usrlib")).isDirectory();
        int restPort = FreePorts.next();
        int rpcPort = FreePorts.next();
        List<String> cluster =
                List.of("-D", "rest.port=" + restPort, "-D", "jobmanager.rpc.port=" + rpcPort);

        List<String> jobManager = new ArrayList<>(List.of("jobmanager"));
        jobManager.addAll(cluster);
        image.container("jobmanager", jobManager, Map.of());
        List<String> taskManager = new ArrayList<>(List.of("taskmanager"));
        taskManager.addAll(cluster);
        taskManager.addAll(List.of("-D", "taskmanager.numberOfTaskSlots=2"));
        image.container("taskmanager-0", taskManager, Map.of());
        image.container("taskmanager-1", taskManager, Map.of());
        ClusterRestClient rest = ClusterRestClient.of("localhost", restPort);
        image.awaitTaskManagers(rest, 2);

        Path output = work.resolve("links");
        String jobId = image.submitHashChainJob(restPort, COUNT, 1000, 300, output);

        assertThat(RunningSumChecks.awaitTerminal(rest, jobId, Duration.ofMinutes(2)))
                .isEqualTo("FINISHED");
        HashChainChecks.assertExactlyOnce(output, COUNT);
        // the job's tasks may all run on either TaskManager
        assertThat(
                        image.log("taskmanager-0", "taskmanager.log")
                                + image.log("taskmanager-1", "taskmanager.log"))
                .as("the TaskManagers ran Clonos's tasks")
                .contains("causal logging on");
    }
}
