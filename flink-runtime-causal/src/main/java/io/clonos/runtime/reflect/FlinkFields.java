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

package io.clonos.runtime.reflect;

import org.apache.flink.annotation.Internal;

import java.lang.reflect.Field;

/**
 * Reads and writes a field of Flink's by reflection, for the patches of Flink's behaviour: a Flink
 * version whose field moved fails with a message that names it, instead of a bare {@link
 * NoSuchFieldException} deep in a task's start.
 */
@Internal
public final class FlinkFields {

    private FlinkFields() {}

    /** The value of field {@code name}, declared by {@code declaring}, of {@code target}. */
    public static Object get(Object target, Class<?> declaring, String name) {
        try {
            return accessible(declaring, name).get(target);
        } catch (ReflectiveOperationException e) {
            throw moved(declaring, name, e);
        }
    }

    /** Sets field {@code name}, declared by {@code declaring}, of {@code target}. */
    public static void set(Object target, Class<?> declaring, String name, Object value) {
        try {
            accessible(declaring, name).set(target, value);
        } catch (ReflectiveOperationException e) {
            throw moved(declaring, name, e);
        }
    }

    /**
     * Field {@code name} of {@code declaring}, made accessible, for a patch to keep and read often.
     */
    public static Field field(Class<?> declaring, String name) {
        try {
            return accessible(declaring, name);
        } catch (ReflectiveOperationException e) {
            throw moved(declaring, name, e);
        }
    }

    private static Field accessible(Class<?> declaring, String name) throws NoSuchFieldException {
        Field field = declaring.getDeclaredField(name);
        field.setAccessible(true);
        return field;
    }

    private static IllegalStateException moved(
            Class<?> declaring, String name, ReflectiveOperationException e) {
        return new IllegalStateException(
                "Flink's "
                        + declaring.getSimpleName()
                        + "."
                        + name
                        + " is not where Clonos expects it",
                e);
    }
}
