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

package io.clonos.runtime.configuration;

import org.apache.flink.annotation.Internal;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The spelling of enumerated configuration values. Flink parses an enum option by comparing the
 * constants' {@code toString()} case-insensitively, so an enum whose {@code toString()} returns
 * this spelling accepts {@code global-rollback} for {@code GLOBAL_ROLLBACK}.
 */
@Internal
public final class ConfigValues {

    public static String spelling(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The accepted spellings of an enum type, for error messages and the reference docs. */
    public static String allowed(Class<?> enumType) {
        return Arrays.stream(enumType.getEnumConstants())
                .map(Object::toString)
                .collect(Collectors.joining(", "));
    }

    private ConfigValues() {}
}
