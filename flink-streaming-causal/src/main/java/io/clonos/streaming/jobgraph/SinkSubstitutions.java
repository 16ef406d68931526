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
import io.clonos.streaming.sink.DeterminantHoldingSink;
import io.clonos.streaming.sink.SinkSubstitute;
import io.clonos.streaming.sink.SinkSubstitution;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.streaming.runtime.operators.sink.SinkWriterOperatorFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * The {@link SinkSubstitution}s in a job's class loader, asked for every sink writer of the job at
 * submission. A sink that a substitution serves gets a writer factory of its substitute; a sink it
 * keeps, and a Flink {@code KafkaSink} that {@value ClonosOptions#PREFIX}kafka-sink.exactly-once
 * asks to substitute while no substitution is loadable, is logged with the reason.
 */
@Internal
final class SinkSubstitutions {

    private static final Logger LOG = LoggerFactory.getLogger(SinkSubstitutions.class);

    /**
     * The class of Flink's Kafka sink, named for the message when its connector has no substitute.
     */
    static final String FLINK_KAFKA_SINK = "org.apache.flink.connector.kafka.sink.KafkaSink";

    private final List<SinkSubstitution> substitutions;
    private final ClonosConfiguration job;
    private final JobID jobId;

    SinkSubstitutions(List<SinkSubstitution> substitutions, ClonosConfiguration job, JobID jobId) {
        this.substitutions = List.copyOf(substitutions);
        this.job = job;
        this.jobId = jobId;
    }

    /** The substitutions the job's class loader finds. */
    static SinkSubstitutions load(
            ClassLoader userCodeClassLoader, ClonosConfiguration job, JobID jobId) {
        List<SinkSubstitution> found = new ArrayList<>();
        Iterator<SinkSubstitution> services =
                ServiceLoader.load(SinkSubstitution.class, userCodeClassLoader).iterator();
        while (hasNext(services, jobId)) {
            try {
                found.add(services.next());
            } catch (ServiceConfigurationError | LinkageError e) {
                // a connector's substitution whose connector is not loadable beside it
                warnUnloadable(jobId, e);
            }
        }
        return new SinkSubstitutions(found, job, jobId);
    }

    private static boolean hasNext(Iterator<SinkSubstitution> services, JobID jobId) {
        try {
            return services.hasNext();
        } catch (ServiceConfigurationError | LinkageError e) {
            // a broken registration: the lookup cannot go past it
            warnUnloadable(jobId, e);
            return false;
        }
    }

    private static void warnUnloadable(JobID jobId, Throwable e) {
        LOG.warn(
                "A sink substitution of job {} does not load; the sinks it would serve keep their"
                        + " two-phase commit.",
                jobId,
                e);
    }

    /** The writer factory of the sink's substitute, if the operator writes to a sink served so. */
    Optional<StreamOperatorFactory<?>> replacement(
            StreamConfig operator, ClassLoader userCodeClassLoader) {
        Class<?> factory = operator.getStreamOperatorFactoryClass(userCodeClassLoader);
        if (factory == null || !SinkWriterOperatorFactory.class.isAssignableFrom(factory)) {
            return Optional.empty();
        }
        SinkWriterOperatorFactory<?, ?> writer =
                operator.getStreamOperatorFactory(userCodeClassLoader);
        Sink<?> sink = writer.getSink();
        if (sink instanceof DeterminantHoldingSink) {
            return Optional.empty();
        }
        for (SinkSubstitution substitution : substitutions) {
            Optional<SinkSubstitute> answer = substitution.substituteFor(sink, job);
            if (answer.isEmpty()) {
                continue;
            }
            Optional<Sink<?>> substitute = answer.get().substitute();
            if (substitute.isPresent()) {
                LOG.info(
                        "Sink '{}' of job {} ({}) is served by {}: its output is published at once,"
                                + " with the determinants it depends on, without two-phase commit.",
                        operator.getOperatorName(),
                        jobId,
                        sink.getClass().getName(),
                        substitute.get().getClass().getName());
                return Optional.of(writerOf(substitute.get()));
            }
            LOG.warn(
                    "Sink '{}' of job {} keeps {}: {}.",
                    operator.getOperatorName(),
                    jobId,
                    sink.getClass().getName(),
                    answer.get().whyKept().orElseThrow());
            return Optional.empty();
        }
        if (sink.getClass().getName().equals(FLINK_KAFKA_SINK)
                && job.getKafkaSinkExactlyOnce() == KafkaSinkExactlyOnce.CLONOS) {
            LOG.warn(
                    "Sink '{}' of job {} keeps Flink's KafkaSink although {} is {}: the job's class"
                            + " loader has no Clonos Kafka connector (clonos-connector-kafka belongs"
                            + " where the job's Kafka connector loads: the job's jar,"
                            + " pipeline.classpaths or the cluster's lib/).",
                    operator.getOperatorName(),
                    jobId,
                    ClonosOptions.KAFKA_SINK_EXACTLY_ONCE.key(),
                    KafkaSinkExactlyOnce.CLONOS);
        }
        return Optional.empty();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static StreamOperatorFactory<?> writerOf(Sink<?> substitute) {
        return new SinkWriterOperatorFactory(substitute);
    }
}
