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

package io.clonos.runtime.minicluster;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.TreeMap;

/**
 * Finds the TaskManagers of an embedded cluster, for failure experiments. The cluster terminates
 * TaskManagers by start index but names them by random resource ids; the REST API shows each
 * one's RPC path, whose number grows with the start order.
 */
@Internal
public final class EmbeddedTaskManagers {

    private EmbeddedTaskManagers() {}

    /** The start index of the TaskManager with this resource id, for {@link MiniCluster#terminateTaskManager}. */
    public static int indexOf(MiniCluster cluster, String resourceId) throws Exception {
        URI taskManagers = cluster.getRestAddress().get().resolve("/taskmanagers");
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(taskManagers).build(), HttpResponse.BodyHandlers.ofString());
        TreeMap<Integer, String> byStartOrder = new TreeMap<>();
        for (JsonNode tm : new ObjectMapper().readTree(response.body()).path("taskmanagers")) {
            String path = tm.path("path").asText();
            byStartOrder.put(Integer.parseInt(path.substring(path.lastIndexOf('_') + 1)), tm.path("id").asText());
        }
        int index = new ArrayList<>(byStartOrder.values()).indexOf(resourceId);
        if (index < 0) {
            throw new IllegalArgumentException("No running TaskManager " + resourceId + " in " + byStartOrder.values());
        }
        return index;
    }
}
