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

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The part of the Kubernetes API a pod-failure experiment calls, for a test whose "pods" are
 * processes on this machine: {@code DELETE /api/v1/namespaces/<ns>/pods/<name>} with a grace period
 * of 0 kills the process standing for the pod ({@code deletion}) and answers as the API does;
 * anything else is refused. Every request is recorded.
 */
final class FakeKubernetesApi implements AutoCloseable {

    private static final Pattern DELETE_POD =
            Pattern.compile("/api/v1/namespaces/([a-z0-9-]+)/pods/([a-z0-9.-]+)");

    private final HttpServer server;
    private final List<String> requests = new CopyOnWriteArrayList<>();

    private FakeKubernetesApi(HttpServer server) {
        this.server = server;
    }

    /** Serves on loopback; {@code deletion} gets the namespace and the pod's name. */
    static FakeKubernetesApi start(Consumer<String[]> deletion) throws IOException {
        HttpServer server =
                HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        FakeKubernetesApi api = new FakeKubernetesApi(server);
        server.createContext(
                "/",
                exchange -> {
                    String request = exchange.getRequestMethod() + " " + exchange.getRequestURI();
                    api.requests.add(request);
                    Matcher pod = DELETE_POD.matcher(exchange.getRequestURI().getPath());
                    boolean delete =
                            exchange.getRequestMethod().equals("DELETE")
                                    && pod.matches()
                                    && "gracePeriodSeconds=0"
                                            .equals(exchange.getRequestURI().getQuery());
                    if (delete) {
                        deletion.accept(new String[] {pod.group(1), pod.group(2)});
                    }
                    byte[] body =
                            (delete
                                            ? "{\"kind\":\"Pod\",\"apiVersion\":\"v1\"}"
                                            : "{\"kind\":\"Status\",\"code\":404}")
                                    .getBytes(StandardCharsets.UTF_8);
                    exchange.sendResponseHeaders(delete ? 200 : 404, body.length);
                    try (OutputStream out = exchange.getResponseBody()) {
                        out.write(body);
                    }
                });
        server.start();
        return api;
    }

    URI address() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    List<String> requests() {
        return List.copyOf(requests);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
