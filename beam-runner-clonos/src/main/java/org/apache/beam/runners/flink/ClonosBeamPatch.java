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

package org.apache.beam.runners.flink;

import org.apache.flink.annotation.Internal;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.PipelineRunner;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.runners.PipelineRunnerRegistrar;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.util.InstanceBuilder;
import org.apache.beam.sdk.values.PCollectionView;

import javax.annotation.Nullable;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * <b>Patch</b>, the only one of this module: what ClonosRunner needs of Beam that Beam does not
 * offer. Each piece names what it works around; all fail safe.
 *
 * <ul>
 *   <li><b>The runner's name.</b> Beam's Kafka sink accepts exactly-once writes only from runners
 *       it knows by the package of their class (Flink's among them), and checks when the pipeline
 *       is run. ClonosRunner translates with Flink's runner; once made, it names this class in the
 *       options, which lives in Flink's runner package and whose factory makes a ClonosRunner, so
 *       that every runner Beam makes from the options (at {@code Pipeline.create} and at {@code
 *       run}) is ClonosRunner and the check passes. The factory finds ClonosRunner as Beam finds
 *       {@code --runner=ClonosRunner}, among the registered runners, so that this package does not
 *       depend on the runner's (which depends on it). Should Beam stop finding the factory, the
 *       pipeline fails to start, naming this class.
 *   <li><b>The exactly-once sink's shard count</b> ({@link #exactlyOnceShards}), a private field of
 *       Beam's package-private shard step. If it is not found, the step stays Beam's and a failure
 *       of it rolls back globally, as without Clonos.
 *   <li><b>A random-key reshuffle's bucket count</b> ({@link #reshuffleBuckets}), a private field
 *       of {@code Reshuffle.AssignShardFn}. If it is not found, the step stays Beam's, as above.
 *   <li><b>A fan-out combine's function and side inputs</b> ({@link #fanoutCombineFn}, {@link
 *       #fanoutSideInputs}), private fields of {@code Combine.PerKeyWithHotKeyFanout}. If they are
 *       not found, the fan-out stays Beam's, as above.
 *   <li><b>A Kafka source's timestamps</b> ({@link #stampsWithWallClock}), through a
 *       package-private getter, so that the causal clock stamps a processing-time read's records.
 *       If it is not found, the read keeps Beam's stamps with a warning, as above.
 * </ul>
 */
@Internal
public final class ClonosBeamPatch extends PipelineRunner<PipelineResult> {

    /** Beam's exactly-once Kafka sink's shard step. */
    public static final String EOS_RESHARD =
            "org.apache.beam.sdk.io.kafka.KafkaExactlyOnceSink$Reshard";

    private static final String SHARD_COUNT_FIELD = "numShards";
    private static final String BUCKET_COUNT_FIELD = "numBuckets";

    private static final String KAFKA_READ = "org.apache.beam.sdk.io.kafka.KafkaIO$Read";
    private static final String KAFKA_PARTITION = "org.apache.kafka.common.TopicPartition";
    private static final String TIMESTAMP_POLICY_FACTORY =
            "org.apache.beam.sdk.io.kafka.TimestampPolicyFactory";
    private static final String PROCESSING_TIME_POLICY =
            "org.apache.beam.sdk.io.kafka.TimestampPolicyFactory$ProcessingTimePolicy";

    private ClonosBeamPatch() {}

    /** The simple name of the runner this class stands for, as {@code --runner} names it. */
    static final String RUNNER = "ClonosRunner";

    /**
     * Beam's factory for options that name this class: ClonosRunner, made by its own factory.
     *
     * @throws IllegalStateException if no registrar on the class path registers ClonosRunner
     */
    public static PipelineRunner<?> fromOptions(PipelineOptions options) {
        return InstanceBuilder.ofType(PipelineRunner.class)
                .fromClass(registeredRunner())
                .fromFactoryMethod("fromOptions")
                .withArg(PipelineOptions.class, options)
                .build();
    }

    private static Class<?> registeredRunner() {
        for (PipelineRunnerRegistrar registrar :
                ServiceLoader.load(
                        PipelineRunnerRegistrar.class, ClonosBeamPatch.class.getClassLoader())) {
            for (Class<?> runner : registrar.getPipelineRunners()) {
                if (runner.getSimpleName().equals(RUNNER)) {
                    return runner;
                }
            }
        }
        throw new IllegalStateException(
                "No PipelineRunnerRegistrar on the class path registers "
                        + RUNNER
                        + ", which the options name through "
                        + ClonosBeamPatch.class.getName());
    }

    /** Names this class as the options' runner. */
    public static void nameAsRunner(PipelineOptions options) {
        options.setRunner(ClonosBeamPatch.class);
    }

    /**
     * The shard count of Beam's exactly-once Kafka sink's shard step.
     *
     * @throws ReflectiveOperationException if Beam keeps it elsewhere
     */
    public static int exactlyOnceShards(DoFn<?, ?> reshard) throws ReflectiveOperationException {
        Field field = reshard.getClass().getDeclaredField(SHARD_COUNT_FIELD);
        field.setAccessible(true);
        return field.getInt(reshard);
    }

    /**
     * The bucket count of a {@code Reshuffle.viaRandomKey()}'s key step ({@code
     * Reshuffle.AssignShardFn}, a private field); null when it has none.
     *
     * @throws ReflectiveOperationException if Beam keeps it elsewhere
     */
    @Nullable
    public static Integer reshuffleBuckets(DoFn<?, ?> assignShard)
            throws ReflectiveOperationException {
        Field field = assignShard.getClass().getDeclaredField(BUCKET_COUNT_FIELD);
        field.setAccessible(true);
        return (Integer) field.get(assignShard);
    }

    /**
     * The combine function of a {@code Combine.perKeyWithFanout(...)} (a private field).
     *
     * @throws ReflectiveOperationException if Beam keeps it elsewhere
     */
    public static Object fanoutCombineFn(Object perKeyWithFanout)
            throws ReflectiveOperationException {
        Field field = perKeyWithFanout.getClass().getDeclaredField("fn");
        field.setAccessible(true);
        return Objects.requireNonNull(field.get(perKeyWithFanout));
    }

    /**
     * The side inputs of a {@code Combine.perKeyWithFanout(...)} (a private field).
     *
     * @throws ReflectiveOperationException if Beam keeps them elsewhere
     */
    @SuppressWarnings("unchecked")
    public static List<PCollectionView<?>> fanoutSideInputs(Object perKeyWithFanout)
            throws ReflectiveOperationException {
        Field field = perKeyWithFanout.getClass().getDeclaredField("sideInputs");
        field.setAccessible(true);
        return (List<PCollectionView<?>>) Objects.requireNonNull(field.get(perKeyWithFanout));
    }

    /**
     * Whether a Kafka source stamps its records with the wall clock as it reads them, {@code
     * KafkaIO}'s default, which a recovered reader cannot reproduce. Asks the source's timestamp
     * policy factory (a package-private getter of Beam's) for a policy.
     *
     * @throws ReflectiveOperationException if Beam keeps the policy elsewhere
     */
    public static boolean stampsWithWallClock(Object kafkaSource)
            throws ReflectiveOperationException {
        ClassLoader loader = kafkaSource.getClass().getClassLoader();
        Method getSpec = kafkaSource.getClass().getDeclaredMethod("getSpec");
        getSpec.setAccessible(true);
        Object spec = getSpec.invoke(kafkaSource);
        Object factory =
                Class.forName(KAFKA_READ, false, loader)
                        .getMethod("getTimestampPolicyFactory")
                        .invoke(spec);
        Class<?> partition = Class.forName(KAFKA_PARTITION, false, loader);
        Object policy =
                Class.forName(TIMESTAMP_POLICY_FACTORY, false, loader)
                        .getMethod("createTimestampPolicy", partition, Optional.class)
                        .invoke(
                                factory,
                                partition
                                        .getConstructor(String.class, int.class)
                                        .newInstance("clonos-probe", 0),
                                Optional.empty());
        return policy.getClass().getName().equals(PROCESSING_TIME_POLICY);
    }

    /** Never made: {@link #fromOptions} makes a ClonosRunner. */
    @Override
    public PipelineResult run(Pipeline pipeline) {
        throw new UnsupportedOperationException("ClonosRunner runs the pipeline");
    }
}
