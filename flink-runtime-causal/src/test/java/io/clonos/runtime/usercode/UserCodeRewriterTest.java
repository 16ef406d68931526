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

package io.clonos.runtime.usercode;

import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.Determinant;
import io.clonos.runtime.causal.ReplayFixtures;
import io.clonos.runtime.causal.TaskCausalLog;

import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassReader;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassVisitor;
import org.apache.flink.shaded.asm9.org.objectweb.asm.Handle;
import org.apache.flink.shaded.asm9.org.objectweb.asm.MethodVisitor;
import org.apache.flink.shaded.asm9.org.objectweb.asm.Opcodes;
import org.apache.flink.util.ChildFirstClassLoader;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * User code's clock and random calls, rewritten as the class loads: they call {@link CausalCalls},
 * whose answers a recovered task replays from its predecessor's log; off a task they are the JDK's.
 */
class UserCodeRewriterTest {

    private static final String[] JDK_CALLS = {
        "java/lang/System.currentTimeMillis",
        "java/lang/System.nanoTime",
        "java/time/Instant.now",
        "java/time/LocalDateTime.now",
        "java/time/Clock.systemUTC",
        "java/lang/Math.random",
        "java/util/UUID.randomUUID",
        "java/util/concurrent/ThreadLocalRandom.nextInt",
        "java/util/concurrent/ThreadLocalRandom.nextLong",
        "new java/util/Random"
    };

    @Test
    void theClockAndRandomCallsOfUserCodeCallCausalCalls() throws IOException {
        assertThat(calls(bytesOf(NondeterministicUser.class)))
                .as("the class as compiled")
                .contains(JDK_CALLS);

        List<String> rewritten =
                calls(UserCodeRewriter.rewrite(bytesOf(NondeterministicUser.class)));
        assertThat(rewritten)
                .doesNotContain(JDK_CALLS)
                .contains(
                        "io/clonos/runtime/usercode/CausalCalls.currentTimeMillis",
                        "io/clonos/runtime/usercode/CausalCalls.nextInt",
                        "new io/clonos/runtime/usercode/CausalRandom",
                        // the method reference System::currentTimeMillis
                        "handle io/clonos/runtime/usercode/CausalCalls.currentTimeMillis");
    }

    /** The calls, constructions and method references of a class's methods. */
    private static List<String> calls(byte[] bytes) {
        List<String> calls = new ArrayList<>();
        new ClassReader(bytes)
                .accept(
                        new ClassVisitor(Opcodes.ASM9) {
                            @Override
                            public MethodVisitor visitMethod(
                                    int access,
                                    String name,
                                    String descriptor,
                                    String signature,
                                    String[] exceptions) {
                                return new MethodVisitor(Opcodes.ASM9) {
                                    @Override
                                    public void visitMethodInsn(
                                            int opcode,
                                            String owner,
                                            String method,
                                            String desc,
                                            boolean isInterface) {
                                        calls.add(owner + "." + method);
                                    }

                                    @Override
                                    public void visitTypeInsn(int opcode, String type) {
                                        if (opcode == Opcodes.NEW) {
                                            calls.add("new " + type);
                                        }
                                    }

                                    @Override
                                    public void visitInvokeDynamicInsn(
                                            String n, String d, Handle b, Object... arguments) {
                                        for (Object argument : arguments) {
                                            if (argument instanceof Handle) {
                                                Handle h = (Handle) argument;
                                                calls.add(
                                                        "handle "
                                                                + h.getOwner()
                                                                + "."
                                                                + h.getName());
                                            }
                                        }
                                    }
                                };
                            }
                        },
                        0);
        return calls;
    }

    @Test
    void aSubclassOfRandomKeepsJavasConstructor() throws IOException {
        assertThat(UserCodeRewriter.rewrite(bytesOf(NondeterministicUser.OwnRandom.class)))
                .as("nothing to rewrite")
                .isNull();
    }

    /**
     * The predecessor reads the clock and draws on its task thread, logging what it needs; its
     * successor, recovering from that log, reads and draws the same values, although its own
     * generators were seeded afresh.
     */
    @Test
    void aRecoveredTaskReadsItsPredecessorsClockAndNumbers() throws Exception {
        Class<?> rewritten = rewrittenUserClass();
        Run predecessor =
                onTaskThread(
                        () ->
                                elements(
                                        rewritten,
                                        ReplayFixtures.running(
                                                new TaskCausalLog(ReplayFixtures.LOG, 5), 1)));
        List<Determinant> logged = ReplayFixtures.logged(predecessor.task(), 5);
        assertThat(logged).hasAtLeastOneElementOfType(Determinant.Timestamp.class);
        assertThat(logged).hasAtLeastOneElementOfType(Determinant.RandomSeed.class);

        Run recovered =
                onTaskThread(
                        () -> {
                            CausalTask task =
                                    new CausalTask(
                                            new TaskCausalLog(ReplayFixtures.LOG, 5),
                                            ReplayFixtures.replaying(
                                                    logged.toArray(new Determinant[0])),
                                            1,
                                            1,
                                            -1);
                            task.processingStarted();
                            return elements(rewritten, task);
                        });
        assertThat(recovered.values()).hasSameSizeAs(predecessor.values());
        for (int i = 0; i < predecessor.values().size(); i++) {
            assertThat(recovered.values().get(i))
                    .as("element %d", i)
                    .containsExactly(predecessor.values().get(i));
        }
    }

    /** Off a task's thread, the calls are the JDK's: fresh numbers, the real time. */
    @Test
    void offATaskTheCallsAreTheJdks() throws Exception {
        Class<?> rewritten = rewrittenUserClass();
        Object user = rewritten.getConstructor().newInstance();
        Method element = rewritten.getMethod("element");
        long before = System.currentTimeMillis();
        long[] first = (long[]) element.invoke(user);
        long after = System.currentTimeMillis();
        long[] second = (long[]) element.invoke(user);
        assertThat(first[0]).isBetween(before, after);
        assertThat(first[6]).as("new Random()'s numbers").isNotEqualTo(second[6]);
        assertThat(first[11])
                .as("new Random(42) is Java's seeded generator")
                .isEqualTo(new Random(42).nextLong());
    }

    @Test
    void onlyClassesOfFlinksUserCodeLoaderAreUserCode() throws Exception {
        try (ChildFirstClassLoader userCode =
                new ChildFirstClassLoader(
                        new URL[0], getClass().getClassLoader(), new String[0], t -> {})) {
            assertThat(UserCodeInstrumentation.isUserCode(userCode, "com/example/Job")).isTrue();
            assertThat(
                            UserCodeInstrumentation.isUserCode(
                                    userCode, "org/apache/flink/connector/kafka/Reader"))
                    .isFalse();
            assertThat(
                            UserCodeInstrumentation.isUserCode(
                                    userCode, "io/clonos/runtime/causal/CausalTask"))
                    .isFalse();
            assertThat(
                            UserCodeInstrumentation.isUserCode(
                                    userCode, "io/clonos/connector/kafka/ClonosKafkaWriter"))
                    .as("the Clonos Kafka sink in the job's class path")
                    .isFalse();
            assertThat(
                            UserCodeInstrumentation.isUserCode(
                                    userCode, "org/apache/kafka/clients/producer/KafkaProducer"))
                    .as("Kafka's producer, which reads the clock in every send")
                    .isFalse();
            assertThat(UserCodeInstrumentation.isUserCode(userCode, "io/clonos/examples/Job"))
                    .as("a job of the examples")
                    .isTrue();
        }
        assertThat(
                        UserCodeInstrumentation.isUserCode(
                                getClass().getClassLoader(), "com/example/Job"))
                .isFalse();
    }

    /** What one task read and drew, an element's values each. */
    private record Run(CausalTask task, List<long[]> values) {}

    /** Ten elements of the rewritten class on {@code task}, a new instance made at the start. */
    private static Run elements(Class<?> rewritten, CausalTask task) throws Exception {
        Object user = rewritten.getConstructor().newInstance();
        Method element = rewritten.getMethod("element");
        List<long[]> values = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            task.beforeElement();
            values.add((long[]) element.invoke(user));
        }
        return new Run(task, values);
    }

    /** Runs on a thread of its own: a task's thread keeps its task. */
    private static <T> T onTaskThread(Callable<T> code) throws Exception {
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            return thread.submit(code).get(1, TimeUnit.MINUTES);
        } finally {
            thread.shutdownNow();
        }
    }

    /** {@link NondeterministicUser}, rewritten, in a loader of its own. */
    private static Class<?> rewrittenUserClass() throws IOException {
        byte[] bytes = UserCodeRewriter.rewrite(bytesOf(NondeterministicUser.class));
        return new ClassLoader(UserCodeRewriterTest.class.getClassLoader()) {
            Class<?> define() {
                return defineClass(NondeterministicUser.class.getName(), bytes, 0, bytes.length);
            }
        }.define();
    }

    private static byte[] bytesOf(Class<?> type) throws IOException {
        try (InputStream in =
                type.getResourceAsStream(
                        type.getName().substring(type.getName().lastIndexOf('.') + 1) + ".class")) {
            return in.readAllBytes();
        }
    }
}
