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
 * A field of Flink's (or of Beam's Flink runner) that a patch reads or writes by reflection. Each
 * is a constant of its patch class, resolved when the class initializes: a Flink whose field moved
 * fails there with a message that names the field, and {@code FlinkCompatibility} initializes every
 * patch class when a cluster component starts, so it fails then rather than deep in a task.
 */
@Internal
public final class ReflectedField {

    private final Field field;

    private ReflectedField(Field field) {
        this.field = field;
    }

    /**
     * Field {@code name} declared by {@code declaring}.
     *
     * @throws IllegalStateException if {@code declaring} declares no such field
     */
    public static ReflectedField of(Class<?> declaring, String name) {
        try {
            Field field = declaring.getDeclaredField(name);
            field.setAccessible(true);
            return new ReflectedField(field);
        } catch (NoSuchFieldException | RuntimeException e) {
            throw new IllegalStateException(
                    "Field "
                            + declaring.getName()
                            + "."
                            + name
                            + ", which Clonos patches, is missing or not accessible",
                    e);
        }
    }

    /** The field's value in {@code target}. */
    public Object get(Object target) {
        try {
            return field.get(target);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("Cannot read " + this, e);
        }
    }

    /** Sets the field of {@code target}. */
    public void set(Object target, Object value) {
        try {
            field.set(target, value);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("Cannot write " + this, e);
        }
    }

    @Override
    public String toString() {
        return field.getDeclaringClass().getName() + "." + field.getName();
    }
}
