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

package io.clonos.streaming.jobgraph;

import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.configuration.ClonosOptions;
import io.clonos.runtime.configuration.ClonosOptions.KafkaSinkExactlyOnce;
import io.clonos.runtime.configuration.TaskSettings;
import io.clonos.runtime.jobgraph.JobGraphRewriter;
import io.clonos.runtime.jobgraph.VertexReplay;
import io.clonos.streaming.causal.CanonicalTimerOrder;
import io.clonos.streaming.operators.CausalWatermarkAssignerFactory;
import io.clonos.streaming.partitioner.CausalPartitioners;
import io.clonos.streaming.sink.DeterminantHoldingSink;
import io.clonos.streaming.tasks.CausalMultipleInputStreamTask;
import io.clonos.streaming.tasks.CausalOneInputStreamTask;
import io.clonos.streaming.tasks.CausalSourceOperatorStreamTask;
import io.clonos.streaming.tasks.CausalSourceStreamTask;
import io.clonos.streaming.tasks.CausalTwoInputStreamTask;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.jobgraph.ClonosChainedSourcesPatch;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.jobgraph.tasks.TaskInvokable;
import org.apache.flink.streaming.api.checkpoint.ExternallyInducedSource;
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamSource;
import org.apache.flink.streaming.api.operators.async.AsyncWaitOperatorFactory;
import org.apache.flink.streaming.api.operators.async.ClonosAsyncWaitPatch;
import org.apache.flink.streaming.runtime.operators.sink.SinkWriterOperatorFactory;
import org.apache.flink.streaming.runtime.tasks.MultipleInputStreamTask;
import org.apache.flink.streaming.runtime.tasks.OneInputStreamTask;
import org.apache.flink.streaming.runtime.tasks.SourceOperatorStreamTask;
import org.apache.flink.streaming.runtime.tasks.SourceStreamTask;
import org.apache.flink.streaming.runtime.tasks.StreamIterationHead;
import org.apache.flink.streaming.runtime.tasks.StreamIterationTail;
import org.apache.flink.streaming.runtime.tasks.TwoInputStreamTask;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Points every vertex of a submitted streaming job at Clonos's task for it and turns unaligned
 * checkpoints off in the tasks' configuration. Flink's {@code Task} instantiates whatever class a
 * vertex names through its {@code (Environment)} constructor, so the job itself stays as the client
 * built it.
 *
 * <p>A vertex whose task Clonos does not know (a user's own task) is left as it is and logged: it
 * runs, but without Clonos's logs. A job that does not checkpoint or has an iteration is not
 * covered at all ({@link #whyUnlogged}): Clonos logs nothing of it.
 */
@Internal
public final class StreamTaskRewriter implements JobGraphRewriter {

    private static final Logger LOG = LoggerFactory.getLogger(StreamTaskRewriter.class);

    private static final Map<String, Class<? extends TaskInvokable>> CAUSAL_TASKS =
            Map.of(
                    OneInputStreamTask.class.getName(), CausalOneInputStreamTask.class,
                    TwoInputStreamTask.class.getName(), CausalTwoInputStreamTask.class,
                    MultipleInputStreamTask.class.getName(), CausalMultipleInputStreamTask.class,
                    SourceOperatorStreamTask.class.getName(), CausalSourceOperatorStreamTask.class,
                    SourceStreamTask.class.getName(), CausalSourceStreamTask.class);

    @Override
    public void rewrite(
            JobGraph jobGraph, ClonosConfiguration clonos, ClassLoader userCodeClassLoader) {
        Optional<String> unlogged = whyUnlogged(jobGraph);
        unlogged.ifPresent(
                why ->
                        LOG.warn(
                                "Job {} is not covered by Clonos: {}. Clonos logs nothing of it (no"
                                        + " determinants, no in-flight log), and a failure is handled as"
                                        + " Flink would, by the job's restart strategy.",
                                jobGraph.getJobID(),
                                why));
        TaskSettings settings = TaskSettings.of(clonos, unlogged.isEmpty());
        SinkSubstitutions sinks =
                SinkSubstitutions.load(userCodeClassLoader, clonos, jobGraph.getJobID());
        if (!settings.causalLogging()
                && clonos.getKafkaSinkExactlyOnce() == KafkaSinkExactlyOnce.CLONOS) {
            LOG.warn(
                    "Job {} keeps its sinks although {} is {}: without causal logging a replayed"
                            + " sink could not reproduce its predecessor's output, so Flink's"
                            + " two-phase commit stays.",
                    jobGraph.getJobID(),
                    ClonosOptions.KAFKA_SINK_EXACTLY_ONCE.key(),
                    KafkaSinkExactlyOnce.CLONOS);
        }
        for (JobVertex vertex : jobGraph.getVertices()) {
            unlogged.ifPresent(why -> VertexReplay.markUnlogged(vertex.getConfiguration(), why));
            String invokable = vertex.getInvokableClassName();
            Class<? extends TaskInvokable> causalTask = CAUSAL_TASKS.get(invokable);
            if (causalTask != null) {
                vertex.setInvokableClass(causalTask);
            } else if (!isCausalTask(invokable)) {
                if (unlogged.isPresent()) {
                    continue;
                }
                LOG.warn(
                        "Vertex '{}' of job {} runs {}, which Clonos does not cover; it runs without"
                                + " Clonos's logs.",
                        vertex.getName(),
                        jobGraph.getJobID(),
                        invokable);
                continue;
            }
            StreamConfig config = new StreamConfig(vertex.getConfiguration());
            config.setUnalignedCheckpointsEnabled(false);
            ClonosChainedSourcesPatch.addChainedSources(
                    vertex, chainedSources(config, userCodeClassLoader));
            if (settings.causalLogging()) {
                if (config.getTimerServiceProvider(userCodeClassLoader) == null) {
                    // timers due together fire in an order a recovered task reproduces
                    config.setTimerServiceProvider(new CanonicalTimerOrder());
                }
                // records go to the channels a recovered task sends them to
                config.setVertexNonChainedOutputs(
                        CausalPartitioners.replace(
                                config.getVertexNonChainedOutputs(userCodeClassLoader)));
                replaceOperators(config, userCodeClassLoader, sinks);
                config.serializeAllConfigs();
                if (hasDeterminantHoldingSink(config, userCodeClassLoader)) {
                    VertexReplay.markDeterminantsHeldBySink(vertex.getConfiguration());
                }
            }
            settings.writeTo(vertex.getConfiguration());
            notReplayableBecause(vertex.getInvokableClassName(), config, userCodeClassLoader)
                    .ifPresent(
                            why -> {
                                if (settings.causalLogging()) {
                                    // said at submission, not first at a failure
                                    LOG.warn(
                                            "Vertex '{}' of job {} cannot be recovered locally: {}. A failure of one"
                                                    + " of its tasks rolls the job back globally (exactly once).",
                                            vertex.getName(),
                                            jobGraph.getJobID(),
                                            why);
                                }
                                VertexReplay.markNotReplayable(vertex.getConfiguration(), why);
                            });
        }
    }

    /**
     * Why Clonos logs nothing of the job, if it does not: without checkpoints no in-flight log
     * would ever be truncated and no standby has a state to start from; an iteration's feedback
     * edge is an in-memory queue between two tasks, which no log sees.
     */
    static Optional<String> whyUnlogged(JobGraph jobGraph) {
        if (!jobGraph.isCheckpointingEnabled()) {
            return Optional.of("it does not checkpoint");
        }
        for (JobVertex vertex : jobGraph.getVertices()) {
            String invokable = vertex.getInvokableClassName();
            if (invokable.equals(StreamIterationHead.class.getName())
                    || invokable.equals(StreamIterationTail.class.getName())) {
                return Optional.of(
                        "it has a DataStream iteration, whose feedback edge is an in-memory queue"
                                + " between its tail and head that Clonos cannot replay");
            }
        }
        return Optional.empty();
    }

    /** The operators of the sources chained to the vertex's operator of several inputs. */
    private static List<OperatorID> chainedSources(
            StreamConfig config, ClassLoader userCodeClassLoader) {
        Map<Integer, StreamConfig> chained = null;
        List<OperatorID> sources = new ArrayList<>();
        for (StreamConfig.InputConfig input : config.getInputs(userCodeClassLoader)) {
            if (input instanceof StreamConfig.SourceInputConfig source) {
                if (chained == null) {
                    chained = config.getTransitiveChainedTaskConfigs(userCodeClassLoader);
                }
                sources.add(chained.get(source.getInputEdge().getSourceId()).getOperatorID());
            }
        }
        return sources;
    }

    /**
     * Why the vertex's tasks cannot be recovered by determinants (its failure then rolls the job
     * back globally); empty when they can.
     */
    static Optional<String> notReplayableBecause(
            String invokable, StreamConfig config, ClassLoader userCodeClassLoader) {
        try {
            if (invokable.equals(CausalSourceStreamTask.class.getName())
                    && config.getStreamOperatorFactory(userCodeClassLoader)
                            instanceof SimpleOperatorFactory<?> simple
                    && simple.getOperator() instanceof StreamSource<?, ?> source
                    && source.getUserFunction() instanceof ExternallyInducedSource<?, ?>) {
                return Optional.of(
                        "its legacy source function triggers its own checkpoints (ExternallyInducedSource), whose places Clonos does not log");
            }
            for (StreamConfig operator :
                    config.getTransitiveChainedTaskConfigsWithSelf(userCodeClassLoader).values()) {
                Class<?> factory = operator.getStreamOperatorFactoryClass(userCodeClassLoader);
                if (factory != null && AsyncWaitOperatorFactory.class.isAssignableFrom(factory)) {
                    // only if the rewriting left Flink's operator in place
                    return Optional.of(
                            "its operator "
                                    + operator.getOperatorName()
                                    + " is Flink's async I/O operator, whose results Clonos does not replay");
                }
                Optional<String> staggered =
                        WindowStaggers.notReplayableBecause(operator, userCodeClassLoader);
                if (staggered.isPresent()) {
                    return staggered;
                }
            }
        } catch (RuntimeException e) {
            LOG.warn(
                    "Cannot tell whether the operators of {} can be replayed; their failures roll back globally.",
                    invokable,
                    e);
            return Optional.of("its operators could not be inspected (" + e + ")");
        }
        return Optional.empty();
    }

    /**
     * Puts Clonos's replayable operators in the place of Flink's, in the vertex's head and chained
     * operators: async I/O, watermark assigners ({@link CausalWatermarkAssignerFactory}), aligned
     * window staggers, and sinks that a connector's substitution serves ({@link
     * SinkSubstitutions}).
     */
    static void replaceOperators(
            StreamConfig vertex, ClassLoader userCodeClassLoader, SinkSubstitutions sinks) {
        replacement(vertex, userCodeClassLoader, sinks).ifPresent(vertex::setStreamOperatorFactory);
        Map<Integer, StreamConfig> chained =
                vertex.getTransitiveChainedTaskConfigs(userCodeClassLoader);
        boolean replaced = false;
        for (StreamConfig operator : chained.values()) {
            Optional<StreamOperatorFactory<?>> replacement =
                    replacement(operator, userCodeClassLoader, sinks);
            if (replacement.isPresent()) {
                // a deserialized StreamConfig cannot take objects; a new view of its configuration
                // can
                StreamConfig writable = new StreamConfig(operator.getConfiguration());
                writable.setStreamOperatorFactory(replacement.get());
                writable.serializeAllConfigs();
                replaced = true;
            }
        }
        if (replaced) {
            vertex.setAndSerializeTransitiveChainedTaskConfigs(chained);
        }
    }

    /**
     * Whether an operator of the vertex's chain writes to a sink that stores the task's
     * determinants beside its output ({@link DeterminantHoldingSink}).
     */
    static boolean hasDeterminantHoldingSink(StreamConfig vertex, ClassLoader userCodeClassLoader) {
        for (StreamConfig operator :
                vertex.getTransitiveChainedTaskConfigsWithSelf(userCodeClassLoader).values()) {
            Class<?> factory = operator.getStreamOperatorFactoryClass(userCodeClassLoader);
            if (factory != null && SinkWriterOperatorFactory.class.isAssignableFrom(factory)) {
                SinkWriterOperatorFactory<?, ?> writer =
                        operator.getStreamOperatorFactory(userCodeClassLoader);
                if (writer.getSink() instanceof DeterminantHoldingSink) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Clonos's factory for the operator, if Clonos replaces Flink's. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Optional<StreamOperatorFactory<?>> replacement(
            StreamConfig operator, ClassLoader userCodeClassLoader, SinkSubstitutions sinks) {
        Class<?> factory = operator.getStreamOperatorFactoryClass(userCodeClassLoader);
        if (factory == null) {
            return Optional.empty();
        }
        if (AsyncWaitOperatorFactory.class.isAssignableFrom(factory)) {
            AsyncWaitOperatorFactory<?, ?> flink =
                    operator.getStreamOperatorFactory(userCodeClassLoader);
            return Optional.of(ClonosAsyncWaitPatch.causalFactory(flink));
        }
        if (WatermarkAssigners.isAssigner(factory, operator, userCodeClassLoader)) {
            return Optional.of(
                    new CausalWatermarkAssignerFactory(
                            operator.getStreamOperatorFactory(userCodeClassLoader)));
        }
        Optional<StreamOperatorFactory<?>> sink = sinks.replacement(operator, userCodeClassLoader);
        if (sink.isPresent()) {
            return sink;
        }
        return WindowStaggers.aligned(operator, userCodeClassLoader);
    }

    private static boolean isCausalTask(String invokable) {
        return CAUSAL_TASKS.values().stream().anyMatch(task -> task.getName().equals(invokable));
    }
}
