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

package io.clonos.bench.kubernetes;

import org.apache.flink.annotation.Internal;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Map;

/**
 * The one call of the Kubernetes API a failure experiment needs: delete a pod at once (grace period
 * 0, as a node's loss or {@code kubectl delete pod --grace-period=0 --force} does), as the pod's
 * service account, whose Role must allow {@code delete} on {@code pods}. Written against the API's
 * REST interface with the JDK's HTTP client rather than a Kubernetes client library: one request
 * does not justify a dependency tree in the distribution.
 */
@Internal
public final class KubernetesApi {

    /** Where Kubernetes mounts a pod's service account. */
    static final Path SERVICE_ACCOUNT = Paths.get("/var/run/secrets/kubernetes.io/serviceaccount");

    private final URI server;
    private final String token;
    private final HttpClient http;

    KubernetesApi(URI server, String token, HttpClient http) {
        this.server = server;
        this.token = token;
        this.http = http;
    }

    /**
     * The API as a pod reaches it: the server from {@code KUBERNETES_SERVICE_HOST} and {@code
     * _PORT}, the service account's token and CA; or, where {@code server} is given (a proxy such
     * as {@code kubectl proxy}, or a test's), that server with the token file if there is one.
     */
    public static KubernetesApi inCluster(Map<String, String> env, URI server)
            throws IOException, GeneralSecurityException {
        Path tokenFile = SERVICE_ACCOUNT.resolve("token");
        String token =
                Files.isReadable(tokenFile)
                        ? Files.readString(tokenFile, StandardCharsets.UTF_8).trim()
                        : null;
        HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10));
        if (server != null) {
            return new KubernetesApi(server, token, http.build());
        }
        String host = env.get("KUBERNETES_SERVICE_HOST");
        String port = env.getOrDefault("KUBERNETES_SERVICE_PORT", "443");
        if (host == null || token == null) {
            throw new IOException(
                    "Not in a Kubernetes pod with a service account (KUBERNETES_SERVICE_HOST is "
                            + (host == null ? "unset" : host)
                            + ", "
                            + tokenFile
                            + (token == null ? " missing" : " present")
                            + "); give the API server's address with --kubernetes-api.");
        }
        http.sslContext(trusting(SERVICE_ACCOUNT.resolve("ca.crt")));
        String hostPart = host.contains(":") ? "[" + host + "]" : host;
        return new KubernetesApi(
                URI.create("https://" + hostPart + ":" + port), token, http.build());
    }

    /** The namespace of this pod's service account, if it runs in one. */
    public static String podNamespace() throws IOException {
        Path file = SERVICE_ACCOUNT.resolve("namespace");
        return Files.isReadable(file)
                ? Files.readString(file, StandardCharsets.UTF_8).trim()
                : "default";
    }

    /**
     * Deletes pod {@code name} of {@code namespace} with a grace period of 0: its containers get
     * SIGKILL. Fails with the API's answer when the API refuses (no such pod, no permission).
     */
    public void deletePod(String namespace, String name) throws IOException, InterruptedException {
        URI uri =
                server.resolve(
                        "/api/v1/namespaces/"
                                + namespace
                                + "/pods/"
                                + name
                                + "?gracePeriodSeconds=0");
        HttpRequest.Builder request =
                HttpRequest.newBuilder(uri)
                        .timeout(Duration.ofSeconds(30))
                        .header("Content-Type", "application/json")
                        .method(
                                "DELETE",
                                HttpRequest.BodyPublishers.ofString(
                                        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
                                                + "\"gracePeriodSeconds\":0}"));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> response =
                http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() / 100 != 2) {
            throw new IOException(
                    "The Kubernetes API refused to delete pod "
                            + namespace
                            + "/"
                            + name
                            + " (HTTP "
                            + response.statusCode()
                            + "): "
                            + response.body());
        }
    }

    private static SSLContext trusting(Path caFile) throws IOException, GeneralSecurityException {
        KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
        trusted.load(null, null);
        try (InputStream in = Files.newInputStream(caFile)) {
            int i = 0;
            for (Certificate certificate :
                    CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                trusted.setCertificateEntry("ca-" + i++, certificate);
            }
        }
        TrustManagerFactory trust =
                TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return context;
    }
}
