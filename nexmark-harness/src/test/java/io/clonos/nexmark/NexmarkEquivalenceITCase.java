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

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.nexmark.NexmarkConfiguration;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Nexmark query of the harness gives the same results on Clonos ({@code ClonosRunner}, an
 * embedded Clonos cluster) as on vanilla Flink 1.20.5 (Beam's {@code FlinkRunner} on a local Flink
 * cluster), for the same bounded, deterministic events, both in streaming mode. Queries 3 and 8
 * (the failure experiments' queries) run by default; the others are tagged slow.
 */
class NexmarkEquivalenceITCase {

    private static final long EVENTS = 10_000;

    /** What each run's last step received, by run. */
    static final Map<String, Queue<String>> RESULTS = new ConcurrentHashMap<>();

    @ParameterizedTest(name = "Q{0}")
    @ValueSource(ints = {3, 8})
    void theFailureExperimentsQueriesGiveFlinksResults(int query) {
        assertSameResults(query);
    }

    @Tag("slow")
    @ParameterizedTest(name = "Q{0}")
    @MethodSource("otherQueries")
    void everyOtherQueryGivesFlinksResults(int query) {
        assertSameResults(query);
    }

    static Stream<Integer> otherQueries() {
        return NexmarkQueries.QUERIES.stream().filter(q -> q != 3 && q != 8);
    }

    private static void assertSameResults(int query) {
        List<String> flink = run(query, "--runner=FlinkRunner", "--flinkMaster=[local]");
        List<String> clonos = run(query, "--runner=ClonosRunner");

        assertThat(flink).as("query %d gives results at all", query).isNotEmpty();
        assertThat(NexmarkQueries.canonical(query, clonos))
                .as("query %d on Clonos", query)
                .isEqualTo(NexmarkQueries.canonical(query, flink));
    }

    private static List<String> run(int query, String... runner) {
        List<String> args = new ArrayList<>(List.of(runner));
        args.add("--streaming=true");
        args.add("--parallelism=2");
        // a pipeline that does not checkpoint is not covered by Clonos: both runners checkpoint
        // (and shut their sources down once they are done, which Beam does not by itself then)
        args.add("--checkpointingInterval=500");
        args.add("--shutdownSourcesAfterIdleMs=0");
        PipelineOptions options =
                PipelineOptionsFactory.fromArgs(args.toArray(new String[0])).create();
        NexmarkConfiguration config = NexmarkQueries.configuration(EVENTS);
        Pipeline pipeline = Pipeline.create(options);
        String id = UUID.randomUUID().toString();
        RESULTS.put(id, new ConcurrentLinkedQueue<>());
        NexmarkQueries.apply(pipeline, config, query).apply(ParDo.of(new Collect(id)));

        PipelineResult result = pipeline.run();

        assertThat(result.waitUntilFinish())
                .as("query %d with %s", query, runner[0])
                .isEqualTo(PipelineResult.State.DONE);
        return new ArrayList<>(RESULTS.remove(id));
    }

    /** Keeps the results of one run in this JVM. */
    static final class Collect extends DoFn<String, Void> {
        private final String run;

        Collect(String run) {
            this.run = run;
        }

        @ProcessElement
        public void process(@Element String line) {
            RESULTS.get(run).add(line);
        }
    }
}
