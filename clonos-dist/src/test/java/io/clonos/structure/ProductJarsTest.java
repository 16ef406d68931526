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

package io.clonos.structure;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The product's jars (the runtime, the task side and the launcher, which the distribution's {@code
 * lib/} holds and a cluster runs, and the Beam runner and the Kafka sink, which a job brings) hold
 * no benchmark or experiment class: none of the benchmark module's classes, no reference to its
 * packages, and no metric reporter of their own (a cluster reports through Flink's reporters; the
 * benchmarks' reporters live in {@code clonos-bench}). Reads the jars' or build directories'
 * entries on the test class path.
 */
class ProductJarsTest {

    private static final List<String> PRODUCT =
            List.of(
                    "flink-runtime-causal",
                    "flink-streaming-causal",
                    "beam-runner-clonos",
                    "clonos-connector-kafka",
                    "clonos-cli");

    private static final String BENCH = "clonos-bench";

    private static final String REPORTER_SERVICE =
            "META-INF/services/org.apache.flink.metrics.reporter.MetricReporterFactory";

    @Test
    void productJarsHoldNoBenchmarkClass() throws IOException {
        Map<String, byte[]> product = new LinkedHashMap<>();
        for (Path root : mainRoots(PRODUCT)) {
            product.putAll(entries(root));
        }
        Map<String, byte[]> bench = new LinkedHashMap<>();
        for (Path root : mainRoots(List.of(BENCH))) {
            bench.putAll(entries(root));
        }
        assertThat(product.keySet())
                .as("the product's classes are on the test class path")
                .anyMatch(name -> name.startsWith("io/clonos/runtime/"))
                .anyMatch(name -> name.startsWith("io/clonos/streaming/"))
                .anyMatch(name -> name.startsWith("io/clonos/beam/"));
        assertThat(bench.keySet())
                .as("the benchmark module's classes are on the test class path")
                .anyMatch(name -> name.startsWith("io/clonos/bench/"));

        List<String> violations = new ArrayList<>();
        for (Map.Entry<String, byte[]> entry : product.entrySet()) {
            String name = entry.getKey();
            if (name.equals(REPORTER_SERVICE)) {
                violations.add(name + ": a metric reporter registered by a product jar");
            }
            if (!name.endsWith(".class")) {
                continue;
            }
            if (name.startsWith("io/clonos/bench/")) {
                violations.add(name + ": a benchmark class in a product jar");
            }
            String content = new String(entry.getValue(), StandardCharsets.ISO_8859_1);
            if (content.contains("io/clonos/bench/")) {
                violations.add(name + ": refers to the benchmark module");
            }
            if (content.contains("org/apache/flink/metrics/reporter/MetricReporter")) {
                violations.add(name + ": a metric reporter in a product jar");
            }
        }
        for (String name : bench.keySet()) {
            String simple = name.substring(name.lastIndexOf('/') + 1);
            if (simple.endsWith(".class")) {
                product.keySet().stream()
                        .filter(other -> other.endsWith("/" + simple))
                        .forEach(other -> violations.add(other + ": a copy of " + name));
            }
        }
        assertThat(violations).isEmpty();
    }

    @Test
    void theCheckSeesAReporterAndAReferenceToTheBenchmarks() throws IOException {
        Map<String, byte[]> bench = new LinkedHashMap<>();
        for (Path root : mainRoots(List.of(BENCH))) {
            bench.putAll(entries(root));
        }
        assertThat(bench).containsKey(REPORTER_SERVICE);
        assertThat(bench.entrySet())
                .anyMatch(
                        entry ->
                                new String(entry.getValue(), StandardCharsets.ISO_8859_1)
                                                .contains(
                                                        "org/apache/flink/metrics/reporter/MetricReporter")
                                        && entry.getKey().endsWith(".class"))
                .anyMatch(
                        entry ->
                                new String(entry.getValue(), StandardCharsets.ISO_8859_1)
                                        .contains("io/clonos/bench/"));
    }

    /** The main class roots (jars or build directories) of {@code modules} on the class path. */
    private static List<Path> mainRoots(List<String> modules) {
        List<Path> roots = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (entry.contains("test-classes") || entry.endsWith("-tests.jar")) {
                continue;
            }
            for (String module : modules) {
                if (entry.contains(File.separator + module + File.separator)
                        || Paths.get(entry).getFileName().toString().startsWith(module + "-")) {
                    roots.add(Paths.get(entry));
                    break;
                }
            }
        }
        return roots;
    }

    private static Map<String, byte[]> entries(Path root) throws IOException {
        Map<String, byte[]> entries = new LinkedHashMap<>();
        if (Files.isDirectory(root)) {
            try (Stream<Path> files = Files.walk(root)) {
                files.filter(Files::isRegularFile)
                        .forEach(
                                file -> {
                                    try {
                                        entries.put(
                                                root.relativize(file)
                                                        .toString()
                                                        .replace(File.separatorChar, '/'),
                                                Files.readAllBytes(file));
                                    } catch (IOException e) {
                                        throw new UncheckedIOException(e);
                                    }
                                });
            }
        } else if (Files.isRegularFile(root)) {
            try (JarFile jar = new JarFile(root.toFile())) {
                Enumeration<JarEntry> all = jar.entries();
                while (all.hasMoreElements()) {
                    JarEntry entry = all.nextElement();
                    if (!entry.isDirectory()) {
                        try (InputStream in = jar.getInputStream(entry)) {
                            entries.put(entry.getName(), in.readAllBytes());
                        }
                    }
                }
            }
        }
        return entries;
    }
}
