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

package io.clonos.nexmark.latency;

import io.clonos.cli.CliOptions;
import io.clonos.cli.ClonosCli;

import org.apache.flink.annotation.Internal;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Deque;
import java.util.List;
import java.util.Map;

/**
 * {@code bin/clonos bench output-latency [--checkpoint-intervals MS,MS] [--seconds S] [--load F |
 * --rate N] [--repetitions R] [--output DIR]}: the launcher runs it with the Kafka experiments'
 * class path ({@code opt/nexmark}), which the other benchmarks do not need.
 */
@Internal
public final class OutputLatencyCommand {

    static final String USAGE =
            "bench output-latency [--checkpoint-intervals MS,MS,...] [--seconds S] [--load F | --rate N]"
                    + " [--repetitions R] [--output DIR]";

    private OutputLatencyCommand() {}

    public static void main(String[] args) {
        System.exit(
                ClonosCli.run(
                        args, System.out, System.err, Map.of("bench", OutputLatencyCommand::run)));
    }

    static int run(Deque<String> args, PrintStream out) throws Exception {
        String benchmark = args.poll();
        if (!"output-latency".equals(benchmark)) {
            throw new ClonosCli.UsageException("Usage: clonos " + USAGE);
        }
        CliOptions options =
                CliOptions.parse(
                        args,
                        List.of(
                                "--checkpoint-intervals",
                                "--seconds",
                                "--load",
                                "--rate",
                                "--repetitions",
                                "--output"),
                        List.of());
        options.requireNoPositional();
        OutputLatencyBenchmark.Settings settings = settings(options);
        out.println(new OutputLatencyBenchmark(settings, out).run());
        return 0;
    }

    static OutputLatencyBenchmark.Settings settings(CliOptions options)
            throws ClonosCli.UsageException {
        OutputLatencyBenchmark.Settings settings = new OutputLatencyBenchmark.Settings();
        settings.checkpointIntervalsMs =
                options.millisecondsList(
                        "--checkpoint-intervals", settings.checkpointIntervalsMs, 10);
        settings.seconds = options.intValue("--seconds", settings.seconds, 1);
        settings.repetitions = options.intValue("--repetitions", settings.repetitions, 1);
        settings.warmUpSeconds = Math.min(settings.warmUpSeconds, settings.seconds / 4);
        if (options.value("--load") != null && options.value("--rate") != null) {
            throw new ClonosCli.UsageException("--load and --rate exclude each other.");
        }
        settings.load = options.fractionValue("--load", settings.load);
        settings.rate = options.intValue("--rate", 0, 1);
        if (options.value("--output") != null) {
            settings.output = Path.of(options.value("--output"));
        }
        return settings;
    }
}
