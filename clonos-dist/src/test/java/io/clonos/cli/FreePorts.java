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

import java.io.BufferedReader;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Fixed ports for the clusters the tests start (REST, JobManager RPC), free when chosen and below
 * the kernel's ephemeral range. A port the kernel handed out as ephemeral (a {@code ServerSocket}
 * on port 0) is free only until the cluster binds it, seconds later: meanwhile any process's
 * outgoing connection or port-0 bind may take it, and the JobManager then fails to start. Below the
 * ephemeral range only a fixed bind can take it.
 */
public final class FreePorts {

    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

    private FreePorts() {}

    public static int next() throws IOException {
        int below = firstEphemeral();
        int first = Math.max(1024, below - 12_000);
        for (int attempt = 0; attempt < 500; attempt++) {
            int port = first + ThreadLocalRandom.current().nextInt(below - first);
            try (ServerSocket socket = new ServerSocket(port)) {
                return socket.getLocalPort();
            } catch (IOException taken) {
                // another one
            }
        }
        throw new IOException("No free port between " + first + " and " + below);
    }

    private static int firstEphemeral() {
        // the file reports a size of 0: read it by lines, not by its size
        try (BufferedReader reader = Files.newBufferedReader(EPHEMERAL_RANGE)) {
            int first = Integer.parseInt(reader.readLine().trim().split("\\s+")[0]);
            return first > 14_000 ? first : 32_768;
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }
}
