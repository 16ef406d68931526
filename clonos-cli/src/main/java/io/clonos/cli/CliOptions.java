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

package io.clonos.cli;

import org.apache.flink.annotation.Internal;

import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Options before the first positional argument; everything from there on is positional. */
@Internal
public final class CliOptions {
    public final Map<String, String> values = new LinkedHashMap<>();
    public final Map<String, String> dynamicProperties = new LinkedHashMap<>();
    public final List<String> flags = new ArrayList<>();
    public final List<String> positional = new ArrayList<>();

    public static CliOptions parse(Deque<String> args, List<String> valued, List<String> flags)
            throws ClonosCli.UsageException {
        CliOptions options = new CliOptions();
        while (!args.isEmpty()) {
            String arg = args.poll();
            if (!options.positional.isEmpty()) {
                options.positional.add(arg);
            } else if (arg.equals("-D") || (arg.startsWith("-D") && arg.length() > 2)) {
                String property = arg.equals("-D") ? args.poll() : arg.substring(2);
                int eq = property == null ? -1 : property.indexOf('=');
                if (eq <= 0) {
                    throw new ClonosCli.UsageException(
                            "-D needs key=value, got '" + property + "'.");
                }
                options.dynamicProperties.put(
                        property.substring(0, eq), property.substring(eq + 1));
            } else if (valued.contains(arg)) {
                String value = args.poll();
                if (value == null) {
                    throw new ClonosCli.UsageException(arg + " needs a value.");
                }
                options.values.put(arg, value);
            } else if (flags.contains(arg)) {
                options.flags.add(arg);
            } else if (arg.startsWith("--")) {
                throw new ClonosCli.UsageException("Unknown option '" + arg + "'.");
            } else {
                options.positional.add(arg);
            }
        }
        return options;
    }

    public String value(String name) {
        return values.get(name);
    }

    public String required(String name) throws ClonosCli.UsageException {
        String value = values.get(name);
        if (value == null) {
            throw new ClonosCli.UsageException("missing " + name + ".");
        }
        return value;
    }

    public int intValue(String name, int defaultValue, int min) throws ClonosCli.UsageException {
        String value = values.get(name);
        if (value == null) {
            return defaultValue;
        }
        try {
            int parsed = Integer.parseInt(value);
            if (parsed >= min) {
                return parsed;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new ClonosCli.UsageException(
                name + " needs an integer of at least " + min + ", got '" + value + "'.");
    }

    /** A fraction in (0, 1], or {@code defaultValue} when the option is absent. */
    public double fractionValue(String name, double defaultValue) throws ClonosCli.UsageException {
        String value = values.get(name);
        if (value == null) {
            return defaultValue;
        }
        double parsed = -1;
        try {
            parsed = Double.parseDouble(value);
        } catch (NumberFormatException ignored) {
            // reported below
        }
        if (!(parsed > 0 && parsed <= 1)) {
            throw new ClonosCli.UsageException(
                    name + " needs a fraction of the capacity in (0, 1], got '" + value + "'.");
        }
        return parsed;
    }

    /**
     * Milliseconds separated by commas, each at least {@code min}, or {@code defaultValue} when the
     * option is absent.
     */
    public List<Long> millisecondsList(String name, List<Long> defaultValue, long min)
            throws ClonosCli.UsageException {
        String value = values.get(name);
        if (value == null) {
            return defaultValue;
        }
        List<Long> parsed = new ArrayList<>();
        for (String each : value.split(",")) {
            long ms = -1;
            try {
                ms = Long.parseLong(each.trim());
            } catch (NumberFormatException ignored) {
                // reported below
            }
            if (ms < min) {
                throw new ClonosCli.UsageException(
                        name
                                + " needs milliseconds of at least "
                                + min
                                + ", separated by commas, got '"
                                + value
                                + "'.");
            }
            parsed.add(ms);
        }
        return parsed;
    }

    public void requireNoPositional() throws ClonosCli.UsageException {
        if (!positional.isEmpty()) {
            throw new ClonosCli.UsageException("Unexpected argument '" + positional.get(0) + "'.");
        }
    }
}
