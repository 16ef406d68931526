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

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * The benchmark jobs' classes (this module's: the jobs, their sinks, probes and statistics) as a
 * job jar, so that a cluster loads them the way it loads a user's job: through Flink's user-code
 * class loader, child first, where Clonos rewrites their clock reads and random draws ({@code
 * clonos.user-code.causal-calls}). A cluster's own class path never has them: the distribution
 * keeps this module in {@code opt/bench}, out of {@code lib/}. The classes come from wherever this
 * module was loaded from: the distribution's jar or a build's class directory.
 */
@Internal
final class BenchmarkJobJar {

    private static final String PACKAGE = "io/clonos/bench/";

    private BenchmarkJobJar() {}

    /** Writes the jar into {@code directory}; returns its path. */
    static Path write(Path directory) throws IOException {
        Path jar = directory.resolve("benchmark-job.jar");
        Path origin;
        try {
            origin =
                    Path.of(
                            BenchmarkJobJar.class
                                    .getProtectionDomain()
                                    .getCodeSource()
                                    .getLocation()
                                    .toURI());
        } catch (URISyntaxException e) {
            throw new IOException("Cannot locate the benchmark's classes", e);
        }
        int classes = 0;
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
            if (Files.isDirectory(origin)) {
                List<Path> files = new ArrayList<>();
                try (Stream<Path> all = Files.walk(origin.resolve(PACKAGE))) {
                    all.filter(f -> f.toString().endsWith(".class")).forEach(files::add);
                }
                for (Path file : files) {
                    String name = origin.relativize(file).toString().replace('\\', '/');
                    try (InputStream in = Files.newInputStream(file)) {
                        copy(name, in, out);
                    }
                    classes++;
                }
            } else {
                try (JarFile source = new JarFile(origin.toFile())) {
                    Enumeration<JarEntry> entries = source.entries();
                    while (entries.hasMoreElements()) {
                        JarEntry entry = entries.nextElement();
                        String name = entry.getName();
                        if (name.startsWith(PACKAGE) && name.endsWith(".class")) {
                            try (InputStream in = source.getInputStream(entry)) {
                                copy(name, in, out);
                            }
                            classes++;
                        }
                    }
                }
            }
        }
        if (classes == 0) {
            throw new IOException("No benchmark classes under " + PACKAGE + " in " + origin);
        }
        return jar;
    }

    private static void copy(String name, InputStream in, JarOutputStream jar) throws IOException {
        jar.putNextEntry(new JarEntry(name));
        in.transferTo(jar);
        jar.closeEntry();
    }
}
