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
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.description.HtmlFormatter;
import org.apache.flink.util.TimeUtils;

import java.time.Duration;

/**
 * Renders {@link ClonosOptions} as the Markdown table of docs/configuration.md, so that the
 * documented keys, defaults and descriptions are the ones the code reads. A test keeps the doc and
 * this rendering equal.
 */
@Internal
public final class ConfigurationReference {

    public static final String BEGIN_MARKER = "<!-- BEGIN GENERATED: ClonosOptions -->";
    public static final String END_MARKER = "<!-- END GENERATED: ClonosOptions -->";

    private ConfigurationReference() {}

    public static String markdownTable() {
        StringBuilder table = new StringBuilder();
        table.append("| Key | Default | Type | Description |\n");
        table.append("|---|---|---|---|\n");
        for (ConfigOption<?> option : ClonosOptions.all()) {
            table.append("| `")
                    .append(option.key())
                    .append("` | `")
                    .append(format(option.defaultValue()))
                    .append("` | ")
                    .append(typeOf(option))
                    .append(" | ")
                    .append(new HtmlFormatter().format(option.description()).replace("|", "\\|"))
                    .append(" |\n");
        }
        return table.toString();
    }

    private static String format(Object value) {
        if (value instanceof Duration) {
            return TimeUtils.formatWithHighestUnit((Duration) value);
        }
        return String.valueOf(value);
    }

    private static String typeOf(ConfigOption<?> option) {
        Object value = option.defaultValue();
        if (value instanceof Enum) {
            return "one of " + ConfigValues.allowed(((Enum<?>) value).getDeclaringClass());
        }
        return value.getClass().getSimpleName();
    }

    /** Prints the table, for pasting between the markers of docs/configuration.md. */
    public static void main(String[] args) {
        System.out.print(markdownTable());
    }
}
