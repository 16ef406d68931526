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

import org.apache.beam.runners.flink.ClonosBeamPatch;
import org.apache.beam.runners.flink.FlinkRunner;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.PipelineRunner;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsValidator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/**
 * {@code --runner=ClonosRunner}: runs an unchanged Beam pipeline on a Clonos cluster. Beam's Flink
 * runner translates the pipeline to a Flink job, as it would for Flink; the Clonos cluster turns it
 * into a causally logged one when it is submitted (Clonos rewrites jobs on the cluster side), so
 * the translation is Beam's own. Without {@code --clonosMaster} the job runs on an embedded Clonos
 * cluster in this JVM, which ends with the job.
 *
 * <p>The Clonos settings among the options ({@code --determinantSharingDepth}, {@code
 * --inFlightLogSpillPolicy}, {@code --standby}, {@code --recoveryMode}, {@code
 * --clonosConfiguration=key=value}) go into the job's configuration, and into the embedded
 * cluster's; a bad value fails here, naming the key.
 */
public final class ClonosRunner extends PipelineRunner<PipelineResult> {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosRunner.class);

    /** Beam's own: a fifth of its default {@code --maxBundleTimeMills} of 1,000 ms. */
    private static final long DEFAULT_WATERMARK_INTERVAL_MS = 200;

    private final ClonosPipelineOptions options;

    private ClonosRunner(ClonosPipelineOptions options) {
        this.options = options;
    }

    /** The runner for {@code options}; Beam calls this for {@code --runner=ClonosRunner}. */
    public static ClonosRunner fromOptions(PipelineOptions options) {
        ClonosRunner runner =
                new ClonosRunner(
                        PipelineOptionsValidator.validate(ClonosPipelineOptions.class, options));
        ClonosBeamPatch.nameAsRunner(options);
        return runner;
    }

    @Override
    public PipelineResult run(Pipeline pipeline) {
        ReplayableKafkaIO.apply(pipeline);
        ReplayableReshuffle.apply(pipeline);
        ReplayableCombine.apply(pipeline);
        finishBundlesBySizeAndCheckpoint();
        emitSourceWatermarks();
        Map<String, String> settings = ClonosSettings.of(options);
        EmbeddedClonosCluster embedded = null;
        try {
            String master = options.getClonosMaster();
            if (master == null || master.isBlank()) {
                if (options.getParallelism() <= 0) {
                    options.setParallelism(2);
                }
                int slots =
                        options.getEmbeddedSlots() != null
                                ? options.getEmbeddedSlots()
                                : Math.max(2, options.getParallelism());
                embedded =
                        EmbeddedClonosCluster.start(
                                settings, options.getEmbeddedTaskManagers(), slots);
                master = embedded.restAddress();
                // the pipeline's classes are on the embedded cluster's class path already; Beam
                // stages the whole class path when it is given no file, so it gets an empty jar
                options.setFilesToStage(List.of(emptyJar().toString()));
                LOG.info(
                        "Running {} on an embedded Clonos cluster at {} ({} TaskManagers, {} slots each).",
                        options.getJobName(),
                        master,
                        options.getEmbeddedTaskManagers(),
                        slots);
            }
            options.setFlinkMaster(master);
            options.setFlinkConfDir(
                    FlinkConfDir.write(settings, options.getFlinkConfDir()).toString());
            PipelineResult result = FlinkRunner.fromOptions(options).run(pipeline);
            return new ClonosPipelineResult(result, embedded);
        } catch (RuntimeException e) {
            closeQuietly(embedded);
            throw e;
        } catch (Exception e) {
            closeQuietly(embedded);
            throw new IllegalStateException("Cannot run the pipeline on Clonos", e);
        }
    }

    /**
     * Where Beam's Flink operators finish their bundles, made replayable. Beam finishes a bundle
     * when {@code --maxBundleTimeMills} passed since the last one finished, a time it keeps out of
     * every checkpoint: a recovered operator counts from when it opened, finishes its bundles (and
     * schedules the timers that move its watermark) at other points than its predecessor did, and
     * cannot replay it. And by default it finishes a bundle while it snapshots its state, which a
     * recovering source does not do again when it passes its predecessor's checkpoints. So
     * ClonosRunner finishes bundles by size ({@code --maxBundleSize}) and before every checkpoint's
     * barrier ({@code --finishBundleBeforeCheckpointing}); an operator's output watermark moves on
     * at those points.
     */
    private void finishBundlesBySizeAndCheckpoint() {
        if (options.getMaxBundleTimeMills() != Long.MAX_VALUE
                || !options.getFinishBundleBeforeCheckpointing()) {
            LOG.info(
                    "Beam bundles finish by size ({} elements) and before checkpoint barriers, not after {} ms: a recovered task could not reproduce the time.",
                    options.getMaxBundleSize(),
                    options.getMaxBundleTimeMills());
            options.setMaxBundleTimeMills(Long.MAX_VALUE);
            options.setFinishBundleBeforeCheckpointing(true);
        }
    }

    /**
     * Beam's unbounded readers hand on their watermarks every {@code --autoWatermarkInterval} ms
     * or, without it, every fifth of {@code --maxBundleTimeMills}, which ClonosRunner sets to never
     * (above): no watermark would leave a source before its input ends, and no event-time window
     * behind KafkaIO or any unbounded source would fire while the pipeline runs. So ClonosRunner
     * sets Beam's own default interval when none is given. When a reader's watermarks come out
     * depends on a timer thread, which a recovered task does not reproduce; it need not: the
     * watermarks a source task hands its operators are determinants like every input's, logged at
     * their places and replayed there.
     */
    private void emitSourceWatermarks() {
        Long interval = options.getAutoWatermarkInterval();
        if (interval == null) {
            options.setAutoWatermarkInterval(DEFAULT_WATERMARK_INTERVAL_MS);
        } else if (interval <= 0) {
            throw new IllegalArgumentException(
                    "--autoWatermarkInterval="
                            + interval
                            + ": Beam's unbounded sources on ClonosRunner need a positive interval in milliseconds (default "
                            + DEFAULT_WATERMARK_INTERVAL_MS
                            + ")");
        }
    }

    /**
     * A jar with nothing in it: what to stage when the cluster has the pipeline's classes already
     * (an embedded cluster, Clonos's or, for comparisons, vanilla Flink's).
     */
    public static Path emptyJar() throws IOException {
        Path jar = Files.createTempFile("clonos-beam-nothing-to-stage", ".jar");
        jar.toFile().deleteOnExit();
        try (JarOutputStream out =
                new JarOutputStream(Files.newOutputStream(jar), new Manifest())) {
            out.flush();
        }
        return jar;
    }

    private static void closeQuietly(EmbeddedClonosCluster embedded) {
        if (embedded != null) {
            try {
                embedded.close();
            } catch (Exception e) {
                LOG.warn("Cannot stop the embedded Clonos cluster.", e);
            }
        }
    }

    @Override
    public String toString() {
        return "ClonosRunner#" + hashCode();
    }
}
