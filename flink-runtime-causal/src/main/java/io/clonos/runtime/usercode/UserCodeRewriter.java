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

import org.apache.flink.annotation.Internal;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassReader;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassVisitor;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassWriter;
import org.apache.flink.shaded.asm9.org.objectweb.asm.Handle;
import org.apache.flink.shaded.asm9.org.objectweb.asm.MethodVisitor;
import org.apache.flink.shaded.asm9.org.objectweb.asm.Opcodes;
import org.apache.flink.shaded.asm9.org.objectweb.asm.Type;

import javax.annotation.Nullable;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Rewrites the nondeterministic calls of a class of user code into calls of {@link CausalCalls}:
 * the clock ({@code System.currentTimeMillis()}, {@code System.nanoTime()}, {@code Instant.now()},
 * the {@code now()} of {@code LocalDateTime}, {@code LocalDate}, {@code LocalTime}, {@code
 * ZonedDateTime} and {@code OffsetDateTime}, {@code Clock.systemUTC()} and {@code
 * systemDefaultZone()}) and random numbers ({@code Math.random()}, {@code StrictMath.random()},
 * {@code UUID.randomUUID()}, the draws of a {@code ThreadLocalRandom}, and {@code new Random()},
 * which becomes a {@link CausalRandom}). Method references to them are rewritten too. Nothing else
 * in the class changes: the JDK classes themselves, and every class that is not user code, stay as
 * they are.
 */
@Internal
public final class UserCodeRewriter {

    private static final String CALLS = Type.getInternalName(CausalCalls.class);
    private static final String RANDOM = "java/util/Random";
    private static final String CAUSAL_RANDOM = Type.getInternalName(CausalRandom.class);
    private static final String THREAD_LOCAL_RANDOM = "java/util/concurrent/ThreadLocalRandom";

    /** Static calls: "owner.name descriptor" to the name of the method of CausalCalls. */
    private static final Map<String, String> STATIC_CALLS = staticCalls();

    /** The draws of a ThreadLocalRandom: "name descriptor" that CausalCalls serves. */
    private static final Map<String, String> THREAD_LOCAL_DRAWS = threadLocalDraws();

    private UserCodeRewriter() {}

    /**
     * The class {@code bytes} with its nondeterministic calls rewritten; null if it makes none (or
     * cannot be read), so that the class loads as it is.
     */
    @Nullable
    public static byte[] rewrite(byte[] bytes) {
        ClassReader reader = new ClassReader(bytes);
        ClassWriter writer = new ClassWriter(reader, 0);
        Rewriting rewriting = new Rewriting(writer);
        reader.accept(rewriting, 0);
        return rewriting.changed ? writer.toByteArray() : null;
    }

    private static final class Rewriting extends ClassVisitor {
        boolean changed;

        Rewriting(ClassVisitor next) {
            super(Opcodes.ASM9, next);
        }

        @Override
        public MethodVisitor visitMethod(
                int access, String name, String descriptor, String signature, String[] exceptions) {
            MethodVisitor next = super.visitMethod(access, name, descriptor, signature, exceptions);
            return new MethodRewriting(next, this);
        }
    }

    private static final class MethodRewriting extends MethodVisitor {
        private final Rewriting owner;

        /** {@code new Random} instructions whose constructor call has not come yet. */
        private int pendingRandoms;

        MethodRewriting(MethodVisitor next, Rewriting owner) {
            super(Opcodes.ASM9, next);
            this.owner = owner;
        }

        @Override
        public void visitTypeInsn(int opcode, String type) {
            if (opcode == Opcodes.NEW && type.equals(RANDOM)) {
                pendingRandoms++;
                owner.changed = true;
                super.visitTypeInsn(opcode, CAUSAL_RANDOM);
                return;
            }
            super.visitTypeInsn(opcode, type);
        }

        @Override
        public void visitMethodInsn(
                int opcode, String type, String name, String descriptor, boolean isInterface) {
            if (opcode == Opcodes.INVOKESPECIAL
                    && type.equals(RANDOM)
                    && name.equals("<init>")
                    && pendingRandoms > 0) {
                // the constructor of a rewritten new Random, not a subclass's super(...)
                pendingRandoms--;
                super.visitMethodInsn(opcode, CAUSAL_RANDOM, name, descriptor, false);
                return;
            }
            if (opcode == Opcodes.INVOKESTATIC) {
                String target = STATIC_CALLS.get(type + "." + name + descriptor);
                if (target != null) {
                    owner.changed = true;
                    super.visitMethodInsn(opcode, CALLS, target, descriptor, false);
                    return;
                }
            }
            if (opcode == Opcodes.INVOKEVIRTUAL
                    && type.equals(THREAD_LOCAL_RANDOM)
                    && THREAD_LOCAL_DRAWS.containsKey(name + descriptor)) {
                owner.changed = true;
                super.visitMethodInsn(
                        Opcodes.INVOKESTATIC,
                        CALLS,
                        name,
                        THREAD_LOCAL_DRAWS.get(name + descriptor),
                        false);
                return;
            }
            super.visitMethodInsn(opcode, type, name, descriptor, isInterface);
        }

        @Override
        public void visitInvokeDynamicInsn(
                String name, String descriptor, Handle bootstrap, Object... arguments) {
            Object[] rewritten = arguments.clone();
            for (int i = 0; i < rewritten.length; i++) {
                if (rewritten[i] instanceof Handle) {
                    Handle handle = (Handle) rewritten[i];
                    String target =
                            handle.getTag() == Opcodes.H_INVOKESTATIC
                                    ? STATIC_CALLS.get(
                                            handle.getOwner()
                                                    + "."
                                                    + handle.getName()
                                                    + handle.getDesc())
                                    : null;
                    if (target != null) {
                        owner.changed = true;
                        rewritten[i] =
                                new Handle(
                                        Opcodes.H_INVOKESTATIC,
                                        CALLS,
                                        target,
                                        handle.getDesc(),
                                        false);
                    }
                }
            }
            super.visitInvokeDynamicInsn(name, descriptor, bootstrap, rewritten);
        }
    }

    private static Map<String, String> staticCalls() {
        Map<String, String> calls = new HashMap<>();
        calls.put("java/lang/System.currentTimeMillis()J", "currentTimeMillis");
        calls.put("java/lang/System.nanoTime()J", "nanoTime");
        calls.put("java/lang/Math.random()D", "random");
        calls.put("java/lang/StrictMath.random()D", "random");
        calls.put("java/util/UUID.randomUUID()Ljava/util/UUID;", "randomUUID");
        calls.put("java/time/Instant.now()Ljava/time/Instant;", "instantNow");
        calls.put("java/time/Clock.systemUTC()Ljava/time/Clock;", "systemUTC");
        calls.put("java/time/Clock.systemDefaultZone()Ljava/time/Clock;", "systemDefaultZone");
        for (String type :
                new String[] {
                    "LocalDateTime", "LocalDate", "LocalTime", "ZonedDateTime", "OffsetDateTime"
                }) {
            String target = Character.toLowerCase(type.charAt(0)) + type.substring(1) + "Now";
            calls.put("java/time/" + type + ".now()Ljava/time/" + type + ";", target);
            calls.put(
                    "java/time/" + type + ".now(Ljava/time/ZoneId;)Ljava/time/" + type + ";",
                    target);
        }
        for (Map.Entry<String, String> call : calls.entrySet()) {
            String descriptor = call.getKey().substring(call.getKey().indexOf('('));
            if (findStatic(call.getValue(), descriptor) == null) {
                throw new IllegalStateException(
                        "CausalCalls has no " + call.getValue() + descriptor);
            }
        }
        return Map.copyOf(calls);
    }

    /** The draws of CausalCalls that take a ThreadLocalRandom first, by the draw's own shape. */
    private static Map<String, String> threadLocalDraws() {
        Map<String, String> draws = new HashMap<>();
        for (Method method : CausalCalls.class.getDeclaredMethods()) {
            Class<?>[] parameters = method.getParameterTypes();
            if (Modifier.isPublic(method.getModifiers())
                    && parameters.length > 0
                    && parameters[0] == ThreadLocalRandom.class) {
                String full = Type.getMethodDescriptor(method);
                String own = "(" + full.substring(full.indexOf(';') + 1);
                draws.put(method.getName() + own, full);
            }
        }
        return Map.copyOf(draws);
    }

    @Nullable
    private static Method findStatic(String name, String descriptor) {
        for (Method method : CausalCalls.class.getDeclaredMethods()) {
            if (method.getName().equals(name)
                    && Modifier.isStatic(method.getModifiers())
                    && Type.getMethodDescriptor(method).equals(descriptor)) {
                return method;
            }
        }
        return null;
    }
}
