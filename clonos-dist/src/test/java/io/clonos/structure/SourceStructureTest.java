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

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shape of the project's main code, read from its sources: files small enough to hold one
 * concern, and packages that depend on each other in one direction only, so that each can be
 * understood, tested and changed from the bottom up.
 */
class SourceStructureTest {

    private static final int MAX_LINES = 600;
    private static final String PROTOCOL = "io.clonos.runtime.protocol";
    private static final String SCHEDULER = "io.clonos.runtime.scheduler";

    /** The runtime's packages that run in tasks and TaskManagers. */
    private static final Set<String> TASK_SIDE_RUNTIME =
            Set.of(
                    "io.clonos.runtime.causal",
                    "io.clonos.runtime.inflightlog",
                    "io.clonos.runtime.network",
                    "io.clonos.runtime.shuffle",
                    "io.clonos.runtime.usercode");

    private static final Pattern PACKAGE =
            Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);

    /** A qualified name of a class: its package, then the class. */
    private static final Pattern QUALIFIED_CLASS =
            Pattern.compile("\\b((?:[a-z]\\w*\\.)+[a-z]\\w*)\\.([A-Z]\\w*)");

    /** The main sources of every module, read from the checkout this module lies in. */
    private static List<Path> mainSources() throws IOException {
        Path root = Paths.get(System.getProperty("user.dir")).getParent();
        List<Path> sources = new ArrayList<>();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module :
                    modules.filter(m -> Files.isDirectory(m.resolve("src/main/java")))
                            .collect(Collectors.toList())) {
                try (Stream<Path> files = Files.walk(module.resolve("src/main/java"))) {
                    files.filter(file -> file.toString().endsWith(".java")).forEach(sources::add);
                }
            }
        }
        return sources;
    }

    @Test
    void noMainSourceFileIsLongerThan600Lines() throws IOException {
        List<Path> sources = mainSources();
        assertThat(sources).hasSizeGreaterThan(100);
        List<String> tooLong = new ArrayList<>();
        for (Path source : sources) {
            long lines = Files.readAllLines(source).size();
            if (lines > MAX_LINES) {
                tooLong.add(source.getFileName() + " (" + lines + " lines)");
            }
        }
        assertThat(tooLong).isEmpty();
    }

    @Test
    void theProjectsPackagesFormNoCycle() throws IOException {
        assertThat(cycles(packageDependencies(mainSources()))).isEmpty();
    }

    /**
     * The task-to-JobManager protocol is a package of messages both sides import: it depends on no
     * other package of the project, and the task side never reaches into the scheduler.
     */
    @Test
    void tasksAndTheSchedulerMeetOnlyInTheProtocol() throws IOException {
        Map<String, Set<String>> dependencies = packageDependencies(mainSources());
        assertThat(dependencies).containsKey(PROTOCOL);
        assertThat(dependencies.get(PROTOCOL)).as("what the protocol depends on").isEmpty();
        dependencies.forEach(
                (from, to) -> {
                    if (from.startsWith("io.clonos.streaming")
                            || TASK_SIDE_RUNTIME.contains(from)) {
                        assertThat(to).as("what %s depends on", from).doesNotContain(SCHEDULER);
                    }
                });
    }

    @Test
    void aCycleIsFoundWhateverItsLength() {
        Map<String, Set<String>> graph =
                Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"), "d", Set.of("a"));
        assertThat(cycles(graph)).containsExactly("a -> b -> c -> a");
        assertThat(cycles(Map.of("a", Set.of("b"), "b", Set.of()))).isEmpty();
    }

    /**
     * Which package of the project refers to which: an edge for each qualified name (an import, a
     * static import, an inline name, javadoc) of a class that the project's own sources declare, in
     * whatever package, the patch packages in Flink's and Beam's included. A Flink class in a
     * package where the project has a patch is not the project's and makes no edge.
     */
    private static Map<String, Set<String>> packageDependencies(List<Path> sources) {
        Map<String, List<String>> textsByPackage = new HashMap<>();
        Set<String> projectClasses = new HashSet<>();
        for (Path source : sources) {
            String text = read(source);
            Matcher declared = PACKAGE.matcher(text);
            if (declared.find()) {
                textsByPackage.computeIfAbsent(declared.group(1), p -> new ArrayList<>()).add(text);
                String name = source.getFileName().toString();
                projectClasses.add(
                        declared.group(1)
                                + "."
                                + name.substring(0, name.length() - ".java".length()));
            }
        }
        Map<String, Set<String>> dependencies = new HashMap<>();
        for (Map.Entry<String, List<String>> sourcesOfPackage : textsByPackage.entrySet()) {
            String from = sourcesOfPackage.getKey();
            Set<String> to = dependencies.computeIfAbsent(from, p -> new HashSet<>());
            Matcher reference =
                    QUALIFIED_CLASS.matcher(String.join("\n", sourcesOfPackage.getValue()));
            while (reference.find()) {
                String target = reference.group(1);
                if (!target.equals(from)
                        && projectClasses.contains(target + "." + reference.group(2))) {
                    to.add(target);
                }
            }
        }
        return dependencies;
    }

    private static String read(Path source) {
        try {
            return Files.readString(source);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * One cycle per package that lies on one, as "a -> b -> a", starting at its smallest package.
     */
    static List<String> cycles(Map<String, Set<String>> graph) {
        Set<String> found = new HashSet<>();
        for (String start : graph.keySet()) {
            List<String> path = new ArrayList<>();
            path.add(start);
            String cycle = cycleBack(graph, start, path, new HashSet<>(Set.of(start)));
            if (cycle != null) {
                found.add(cycle);
            }
        }
        return found.stream().sorted().collect(Collectors.toList());
    }

    private static String cycleBack(
            Map<String, Set<String>> graph, String start, List<String> path, Set<String> visited) {
        for (String next :
                graph.getOrDefault(path.get(path.size() - 1), Set.of()).stream()
                        .sorted()
                        .collect(Collectors.toList())) {
            if (next.equals(start)) {
                return rotated(path);
            }
            if (visited.add(next)) {
                path.add(next);
                String cycle = cycleBack(graph, start, path, visited);
                if (cycle != null) {
                    return cycle;
                }
                path.remove(path.size() - 1);
            }
        }
        return null;
    }

    private static String rotated(List<String> cycle) {
        int smallest = cycle.indexOf(cycle.stream().min(String::compareTo).orElseThrow());
        List<String> ordered = new ArrayList<>(cycle.subList(smallest, cycle.size()));
        ordered.addAll(cycle.subList(0, smallest));
        ordered.add(ordered.get(0));
        return String.join(" -> ", ordered);
    }
}
