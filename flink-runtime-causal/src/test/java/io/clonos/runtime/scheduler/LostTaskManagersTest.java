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

import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.taskmanager.TaskManagerLocation;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;

import static org.assertj.core.api.Assertions.assertThat;

/** The probe that confirms a reported TaskManager's death. */
class LostTaskManagersTest {

    @Test
    void aListeningDataPortIsNoProofOfDeathAClosedOneIs() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        int port;
        try (ServerSocket dataPort = new ServerSocket(0, 50, loopback)) {
            port = dataPort.getLocalPort();
            assertThat(LostTaskManagers.refuses(location(loopback, port)))
                    .as("a process listens on the data port")
                    .isFalse();
        }
        assertThat(LostTaskManagers.refuses(location(loopback, port)))
                .as("nothing listens on the data port any more")
                .isTrue();
    }

    private static TaskManagerLocation location(InetAddress address, int dataPort) {
        return new TaskManagerLocation(ResourceID.generate(), address, dataPort);
    }
}
