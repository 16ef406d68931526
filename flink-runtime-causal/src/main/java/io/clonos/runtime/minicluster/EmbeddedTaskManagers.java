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
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Finds the TaskManagers of an embedded cluster, for failure experiments. The cluster terminates
 * TaskManagers by start index but names them by random resource ids; the REST API shows each one's
 * RPC path, whose number grows with the start order.
 */
@Internal
public final class EmbeddedTaskManagers {

    private EmbeddedTaskManagers() {}

    /**
     * The start index of the TaskManager with this resource id, for {@link
     * MiniCluster#terminateTaskManager}. Only while every TaskManager the cluster started runs: the
     * cluster keeps a terminated one's index, the REST API forgets it ({@link #indexes} first).
     */
    public static int indexOf(MiniCluster cluster, String resourceId) throws Exception {
        Integer index = indexes(cluster).get(resourceId);
        if (index == null) {
            throw new IllegalArgumentException(
                    "No running TaskManager " + resourceId + " in " + indexes(cluster).keySet());
        }
        return index;
    }

    /**
     * Every running TaskManager's resource id with its start index, for {@link
     * MiniCluster#terminateTaskManager}; to be taken while all TaskManagers run.
     */
    public static Map<String, Integer> indexes(MiniCluster cluster) throws Exception {
        URI taskManagers = cluster.getRestAddress().get().resolve("/taskmanagers");
        HttpResponse<String> response =
                HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(taskManagers).build(),
                                HttpResponse.BodyHandlers.ofString());
        TreeMap<Integer, String> byStartOrder = new TreeMap<>();
        for (JsonNode tm : new ObjectMapper().readTree(response.body()).path("taskmanagers")) {
            String path = tm.path("path").asText();
            byStartOrder.put(
                    Integer.parseInt(path.substring(path.lastIndexOf('_') + 1)),
                    tm.path("id").asText());
        }
        Map<String, Integer> indexes = new LinkedHashMap<>();
        for (String id : byStartOrder.values()) {
            indexes.put(id, indexes.size());
        }
        return indexes;
    }
}
