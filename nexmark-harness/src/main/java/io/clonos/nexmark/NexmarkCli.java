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

package io.clonos.nexmark;

import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;

/**
 * {@code bin/clonos nexmark ...}: the Nexmark experiments. The launcher runs it with the harness's
 * jars ({@code opt/nexmark}) next to Clonos's, which Clonos's own commands do not load.
 */
public final class NexmarkCli {

    static final String USAGE = String.join("\n",
            "Usage: clonos nexmark <experiment> [options]",
            "  overhead [--events N] [--queries Q,Q,...] [--parallelism P] [--repetitions R] [--output DIR]",
            "        Every Nexmark query but Q10, without failures, on Flink and on Clonos at",
            "        determinant sharing depth 1 and full, after a warm-up run on each; throughput",
            "        per query and relative to Flink,",
            "        as CSV, JSON and an HTML chart; R runs per query and system, medians. Defaults:",
            "        100000 events, all queries, parallelism 2, 3 repetitions,",
            "        bench-results/nexmark-overhead.",
            "  failure --query 3|8   not built yet.");

    private NexmarkCli() {}

    public static void main(String[] args) throws Exception {
        System.exit(run(args));
    }

    static int run(String[] args) throws Exception {
        Deque<String> rest = new ArrayDeque<>(Arrays.asList(args));
        String experiment = rest.poll();
        if (!"overhead".equals(experiment)) {
            System.err.println("failure".equals(experiment) ? "clonos nexmark failure is not built yet.\n" + USAGE : USAGE);
            return 2;
        }
        NexmarkOverhead.Settings settings = new NexmarkOverhead.Settings();
        while (!rest.isEmpty()) {
            String option = rest.poll();
            String value = rest.poll();
            if (value == null) {
                System.err.println("Option " + option + " needs a value.\n" + USAGE);
                return 2;
            }
            try {
                switch (option) {
                    case "--events" -> settings.events = positive(option, Long.parseLong(value));
                    case "--parallelism" -> settings.parallelism = (int) positive(option, Integer.parseInt(value));
                    case "--repetitions" -> settings.repetitions = (int) positive(option, Integer.parseInt(value));
                    case "--output" -> settings.output = Path.of(value);
                    case "--queries" -> settings.queries = queries(value);
                    default -> {
                        System.err.println("Unknown option " + option + ".\n" + USAGE);
                        return 2;
                    }
                }
            } catch (IllegalArgumentException e) {
                System.err.println(e.getMessage() + "\n" + USAGE);
                return 2;
            }
        }
        new NexmarkOverhead(settings, System.out).run();
        return 0;
    }

    private static long positive(String option, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(option + " takes a positive number, not " + value + ".");
        }
        return value;
    }

    private static List<Integer> queries(String value) {
        List<Integer> queries = new ArrayList<>();
        for (String query : value.split(",")) {
            int number = Integer.parseInt(query.trim());
            if (!NexmarkQueries.QUERIES.contains(number)) {
                throw new IllegalArgumentException("--queries takes queries of " + NexmarkQueries.QUERIES + ", not " + number + ".");
            }
            queries.add(number);
        }
        return queries;
    }
}
