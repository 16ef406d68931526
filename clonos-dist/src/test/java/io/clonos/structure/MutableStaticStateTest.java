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
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The main code keeps no mutable state in static fields: what the tasks, gates and partitions of a
 * TaskManager share belongs to that TaskManager's network context, so that TaskManagers sharing a
 * JVM (every embedded cluster) share nothing and tests do not depend on their order; the
 * benchmarks' jobs hand what their probes observe back through files ({@code ProbeRecords}).
 * Checked by reflection over the classes of every module.
 *
 * <p>Mutable means: a static field that is not final, or a final one holding an array, a collection
 * or map that can be changed, an atomic, or an executor. One kind is allowed: a {@link
 * ThreadLocal}, which holds per-thread state (a task's thread runs one task) and is what a user
 * function without a runtime context finds its task's causal services by.
 */
class MutableStaticStateTest {

    /** Every module with main code. */
    private static final List<String> MODULES =
            List.of(
                    "flink-runtime-causal",
                    "flink-streaming-causal",
                    "beam-runner-clonos",
                    "clonos-examples",
                    "clonos-bench",
                    "nexmark-harness",
                    "clonos-cli");

    @Test
    void theMainCodeKeepsNoMutableStaticState() throws Exception {
        List<String> classes = mainClasses();
        assertThat(classes)
                .as("the modules' main classes are on the test class path")
                .hasSizeGreaterThan(200);
        List<String> violations = new ArrayList<>();
        for (String name : classes) {
            Class<?> type = Class.forName(name, false, getClass().getClassLoader());
            for (Field field : type.getDeclaredFields()) {
                String violation = violation(field);
                if (violation != null) {
                    violations.add(name + "." + field.getName() + ": " + violation);
                }
            }
        }
        assertThat(violations).isEmpty();
    }

    /** Why a field is mutable static state; null if it is not. */
    static String violation(Field field) throws IllegalAccessException {
        int modifiers = field.getModifiers();
        if (!Modifier.isStatic(modifiers) || field.isSynthetic() || field.isEnumConstant()) {
            return null;
        }
        if (!Modifier.isFinal(modifiers)) {
            return "static and not final";
        }
        Class<?> type = field.getType();
        if (type.isPrimitive() || ThreadLocal.class.isAssignableFrom(type)) {
            return null;
        }
        field.setAccessible(true);
        Object value = field.get(null);
        if (value == null) {
            return null;
        }
        if (value.getClass().isArray()) {
            return java.lang.reflect.Array.getLength(value) == 0 ? null : "an array";
        }
        if ((value instanceof Collection || value instanceof Map) && !isUnmodifiable(value)) {
            return "a modifiable " + value.getClass().getName();
        }
        if (value.getClass().getName().startsWith("java.util.concurrent.atomic.")
                || value instanceof ExecutorService) {
            return "a " + value.getClass().getName();
        }
        return null;
    }

    private static boolean isUnmodifiable(Object value) {
        String name = value.getClass().getName();
        return name.startsWith("java.util.ImmutableCollections$")
                || name.startsWith("java.util.Collections$Unmodifiable")
                || name.startsWith("java.util.Collections$Empty")
                || name.startsWith("java.util.Collections$Singleton")
                || name.startsWith("org.apache.flink.shaded.guava") && name.contains("Immutable");
    }

    @Test
    void theCheckFindsEachKindOfMutableState() throws Exception {
        assertThat(violation(Examples.class.getDeclaredField("counter")))
                .isEqualTo("static and not final");
        assertThat(violation(Examples.class.getDeclaredField("REGISTRY")))
                .startsWith("a modifiable java.util.concurrent.ConcurrentHashMap");
        assertThat(violation(Examples.class.getDeclaredField("SLOTS"))).isEqualTo("an array");
        assertThat(violation(Examples.class.getDeclaredField("NEXT")))
                .isEqualTo("a java.util.concurrent.atomic.AtomicLong");
        assertThat(violation(Examples.class.getDeclaredField("NAMES"))).isNull();
        assertThat(violation(Examples.class.getDeclaredField("TASK"))).isNull();
        assertThat(violation(Examples.class.getDeclaredField("LIMIT"))).isNull();
    }

    @SuppressWarnings("unused")
    private static final class Examples {
        static int counter;
        static final Map<String, String> REGISTRY = new java.util.concurrent.ConcurrentHashMap<>();
        static final int[] SLOTS = new int[4];
        static final java.util.concurrent.atomic.AtomicLong NEXT =
                new java.util.concurrent.atomic.AtomicLong();
        static final Set<String> NAMES = Set.of("a", "b");
        static final ThreadLocal<Object> TASK = new ThreadLocal<>();
        static final long LIMIT = 10;
    }

    /** The main classes of every module, found on the class path (their jars or target/classes). */
    private static List<String> mainClasses() throws IOException {
        List<String> classes = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (MODULES.stream().noneMatch(entry::contains)
                    || entry.contains("test-classes")
                    || entry.endsWith("-tests.jar")) {
                continue;
            }
            Path path = Paths.get(entry);
            if (Files.isDirectory(path)) {
                try (Stream<Path> files = Files.walk(path)) {
                    files.filter(file -> file.toString().endsWith(".class"))
                            .forEach(
                                    file ->
                                            classes.add(
                                                    className(
                                                            path.relativize(file)
                                                                    .toString()
                                                                    .replace(
                                                                            File.separatorChar,
                                                                            '/'))));
                }
            } else if (entry.endsWith(".jar")) {
                try (JarFile jar = new JarFile(entry)) {
                    Enumeration<JarEntry> entries = jar.entries();
                    while (entries.hasMoreElements()) {
                        String name = entries.nextElement().getName();
                        if (name.endsWith(".class") && !name.startsWith("META-INF/")) {
                            classes.add(className(name));
                        }
                    }
                }
            }
        }
        return classes;
    }

    private static String className(String path) {
        return path.substring(0, path.length() - ".class".length()).replace('/', '.');
    }
}
