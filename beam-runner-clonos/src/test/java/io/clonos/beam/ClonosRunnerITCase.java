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

package io.clonos.beam;

import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.minicluster.ClonosMiniCluster;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.runtime.client.JobStatusMessage;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.FlatMapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Beam pipelines with no Clonos code in them, run with {@code --runner=ClonosRunner} on an embedded
 * Clonos cluster and on a running one.
 */
class ClonosRunnerITCase {

    private static final List<String> LINES =
            List.of("to be or not to be", "that is the question", "to be is to do");

    /** What the pipelines' last step saw, in this JVM: "word=count". */
    static final Queue<String> COUNTS = new ConcurrentLinkedQueue<>();

    /** The determinant sharing depth of the Clonos tasks the last step ran in; -2 outside one. */
    static final Queue<Integer> SHARING_DEPTHS = new ConcurrentLinkedQueue<>();

    /** What the windowed pipeline's last step saw while the pipeline ran: "window start=count". */
    static final Queue<String> WINDOWS = new ConcurrentLinkedQueue<>();

    @BeforeEach
    void clear() {
        COUNTS.clear();
        WINDOWS.clear();
        SHARING_DEPTHS.clear();
    }

    @Test
    void anUnchangedPipelineRunsOnAnEmbeddedClonosCluster() {
        PipelineOptions options =
                PipelineOptionsFactory.fromArgs(
                                "--runner=ClonosRunner",
                                "--streaming=true",
                                "--parallelism=2",
                                // a pipeline that does not checkpoint is not covered; with
                                // checkpoints, Beam keeps finished sources up unless told not to
                                "--checkpointingInterval=500",
                                "--shutdownSourcesAfterIdleMs=0")
                        .create();

        PipelineResult result = wordCount(options).run();

        assertThat(result.waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
        assertThat(COUNTS).containsExactlyInAnyOrderElementsOf(expectedCounts());
        assertThat(SHARING_DEPTHS)
                .as("the pipeline ran in Clonos tasks (the cluster's default: full depth)")
                .isNotEmpty()
                .containsOnly(-1);
    }

    @Test
    void theClonosOptionsReachAJobOnARunningCluster() throws Exception {
        try (ClonosMiniCluster cluster = runningCluster()) {
            ClonosPipelineOptions options = optionsFor(cluster, "--determinantSharingDepth=1");

            PipelineResult result = wordCount(options).run();

            assertThat(result.waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
            assertThat(COUNTS).containsExactlyInAnyOrderElementsOf(expectedCounts());
            assertThat(SHARING_DEPTHS)
                    .as("the job's own setting, not the cluster's (full depth)")
                    .isNotEmpty()
                    .containsOnly(1);
        }
    }

    @Test
    void aBadClonosOptionFailsBeforeTheJobIsSubmitted() {
        PipelineOptions options =
                PipelineOptionsFactory.fromArgs(
                                "--runner=ClonosRunner",
                                "--streaming=true",
                                "--recoveryMode=sometimes")
                        .create();

        assertThatThrownBy(() -> wordCount(options).run())
                .hasMessageContaining("clonos.recovery.mode")
                .hasMessageContaining("sometimes")
                .hasMessageContaining("local");
    }

    /**
     * An unbounded source's watermarks reach the windows while the pipeline runs: element n of an
     * endless sequence has event time n ms, so every window of 500 ms fires once with 500 elements,
     * and only if watermarks leave the source before its input ends (which it never does).
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void eventTimeWindowsBehindAnUnboundedSourceFireWhileThePipelineRuns() throws Exception {
        try (ClonosMiniCluster cluster = runningCluster()) {
            ClonosPipelineOptions options = optionsFor(cluster);
            // an endless pipeline: submitted, not waited for
            options.setAttachedMode(false);
            Pipeline pipeline = Pipeline.create(options);
            pipeline.apply(
                            GenerateSequence.from(0)
                                    .withRate(2_000, Duration.standardSeconds(1))
                                    .withTimestampFn(Instant::new))
                    .apply(Window.into(FixedWindows.of(Duration.millis(500))))
                    .apply(Combine.globally(Count.<Long>combineFn()).withoutDefaults())
                    .apply(ParDo.of(new RecordWindow()));

            pipeline.run();
            JobID job = runningJob(cluster);
            while (WINDOWS.size() < 3) {
                assertThat(cluster.getJobStatus(job).get()).isEqualTo(JobStatus.RUNNING);
                Thread.sleep(50);
            }
            cluster.cancelJob(job).get();

            assertThat(WINDOWS)
                    .contains("0=500", "500=500", "1000=500")
                    .allMatch(window -> window.endsWith("=500"));
        }
    }

    /** A Clonos cluster of 2 TaskManagers with 2 slots each, started, its REST port free. */
    private static ClonosMiniCluster runningCluster() throws Exception {
        Configuration config = new Configuration();
        config.set(RestOptions.BIND_PORT, "0");
        ClonosMiniCluster cluster = ClonosMiniCluster.create(config, 2, 2);
        cluster.start();
        return cluster;
    }

    /**
     * Options of a pipeline on ClonosRunner for {@code cluster}, parallelism 2, and {@code more}.
     */
    private static ClonosPipelineOptions optionsFor(ClonosMiniCluster cluster, String... more)
            throws Exception {
        URI rest = cluster.getRestAddress().get();
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--runner=ClonosRunner",
                                "--streaming=true",
                                "--parallelism=2",
                                "--checkpointingInterval=500",
                                "--shutdownSourcesAfterIdleMs=0",
                                "--clonosMaster=" + rest.getHost() + ":" + rest.getPort()));
        args.addAll(Arrays.asList(more));
        ClonosPipelineOptions options =
                PipelineOptionsFactory.fromArgs(args.toArray(new String[0]))
                        .as(ClonosPipelineOptions.class);
        // the pipeline's classes are on this cluster's class path: an empty jar to upload (Beam
        // uploads the whole class path when it is given nothing)
        options.setFilesToStage(List.of(ClonosRunner.emptyJar().toString()));
        return options;
    }

    private static JobID runningJob(ClonosMiniCluster cluster) throws Exception {
        while (true) {
            for (JobStatusMessage status : cluster.listJobs().get()) {
                if (status.getJobState() == JobStatus.RUNNING) {
                    return status.getJobId();
                }
            }
            Thread.sleep(50);
        }
    }

    @Test
    void aNonPositiveWatermarkIntervalFailsBeforeTheJobIsSubmitted() {
        PipelineOptions options =
                PipelineOptionsFactory.fromArgs(
                                "--runner=ClonosRunner",
                                "--streaming=true",
                                "--autoWatermarkInterval=0")
                        .create();

        assertThatThrownBy(() -> wordCount(options).run())
                .hasMessageContaining("--autoWatermarkInterval=0")
                .hasMessageContaining("positive");
    }

    /** Word count, as any Beam user writes it; only the last step records what it sees. */
    private static Pipeline wordCount(PipelineOptions options) {
        Pipeline pipeline = Pipeline.create(options);
        pipeline.apply(Create.of(LINES))
                .apply(
                        FlatMapElements.into(TypeDescriptors.strings())
                                .via((String line) -> Arrays.asList(line.split(" "))))
                .apply(Count.perElement())
                .apply(ParDo.of(new Record()));
        return pipeline;
    }

    private static List<String> expectedCounts() {
        Map<String, Long> counts =
                LINES.stream()
                        .flatMap(line -> Arrays.stream(line.split(" ")))
                        .collect(Collectors.groupingBy(w -> w, Collectors.counting()));
        List<String> expected = new ArrayList<>();
        counts.forEach((word, count) -> expected.add(word + "=" + count));
        return expected;
    }

    /**
     * Records each count, and the sharing depth of the Clonos task it runs in (the test's probe).
     */
    static final class Record extends DoFn<KV<String, Long>, Void> {
        @ProcessElement
        public void process(@Element KV<String, Long> count) {
            COUNTS.add(count.getKey() + "=" + count.getValue());
            CausalTask task = CausalTask.ofCurrentThread();
            SHARING_DEPTHS.add(task == null ? -2 : task.sharingDepth());
        }
    }

    /** Records each window's count, by the window's start in event-time milliseconds. */
    static final class RecordWindow extends DoFn<Long, Void> {
        @ProcessElement
        public void process(@Element Long count, BoundedWindow window) {
            WINDOWS.add(((IntervalWindow) window).start().getMillis() + "=" + count);
        }
    }
}
