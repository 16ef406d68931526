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

package io.clonos.connector.kafka;

import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.CorruptCausalLogException;
import io.clonos.runtime.causal.DownstreamCopy;
import io.clonos.runtime.causal.LocalRecoveryImpossibleException;
import io.clonos.streaming.causal.CausalProcessingTimeService;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema.KafkaSinkContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.execution.SuppressRestartsException;

import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * The writer of {@link ClonosKafkaSink}: publishes each record at once, without transactions,
 * through an idempotent producer, and stores the task's determinants beside the records.
 *
 * <p>Every record takes the next position of the writer's output and carries it, with the writer's
 * id, in a header. Records are handed to the producer in publications, at the latest every publish
 * interval, at a checkpoint and at the end of input; before each, the writer reads what its task
 * logged since the last (its own determinants, and the upstream ones it holds within the sharing
 * depth) and attaches what no acknowledged record carries yet to the publication's first record of
 * each partition ({@link UndurableDeterminants}). A record is therefore visible only together with
 * every determinant its contents and position depend on.
 *
 * <p>A writer created in a later attempt reads back what its predecessors published after the
 * restored checkpoint ({@link ReadBack}), answers its task's recovery with the determinants found
 * (as a consumer would: the task then replays its predecessor's choices), and while it regenerates
 * the positions found it publishes none of them: the same contents are skipped; other contents are
 * a divergence ({@link DivergencePolicy}). No transaction is opened, resumed or aborted.
 */
@Internal
final class ClonosKafkaWriter<IN> implements StatefulSinkWriter<IN, WriterCheckpoint> {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosKafkaWriter.class);

    /** A publication is started from {@link #write} once this many records wait. */
    static final int MAX_PUBLICATION = 1000;

    private final KafkaProducer<byte[], byte[]> producer;
    private final KafkaRecordSerializationSchema<IN> serializer;
    private final KafkaSinkContext sinkContext;
    private final Set<String> topics;
    private final String taskName;
    @Nullable private final CausalTask causal;
    private DownstreamCopy downstream = new DownstreamCopy();
    private final UndurableDeterminants undurable = new UndurableDeterminants();
    private final byte[] writerId;
    private final Map<TopicPartition, Long> readFrom;
    private final Map<TopicPartition, Long> acknowledgedEnd = new ConcurrentHashMap<>();
    private final PublishedOutput published;
    private final DivergencePolicy onDivergence;
    private final long maxUndurableBytes;
    private final List<ProducerRecord<byte[], byte[]>> waiting = new ArrayList<>();
    private final AtomicReference<Exception> asyncError = new AtomicReference<>();

    /** Each topic's partitions, sorted, as the producer's metadata had them first. */
    private final Map<String, int[]> partitions = new HashMap<>();

    private final ProcessingTimeService timers;
    private final long publishIntervalMillis;
    private final Counter skipped;
    private final Counter divergent;
    private final Counter determinantBytes;
    private long nextPosition;
    private boolean divergedOnce;
    private int stickyPartition;
    private boolean closed;

    ClonosKafkaWriter(
            ClonosKafkaSink<IN> sink,
            WriterInitContext context,
            Collection<WriterCheckpoint> restored)
            throws IOException {
        this.serializer = sink.serializer();
        this.topics = Set.copyOf(sink.topics());
        this.onDivergence = sink.divergencePolicy();
        this.maxUndurableBytes = sink.maxUndurableDeterminantBytes();
        this.publishIntervalMillis = Math.max(1, sink.publishInterval().toMillis());
        this.taskName = context.getTaskInfo().getTaskNameWithSubtasks();
        ProcessingTimeService service = context.getProcessingTimeService();
        if (service instanceof CausalProcessingTimeService causalService) {
            this.causal = causalService.task();
            // publishing makes no choice: its timer is no determinant
            this.timers = causalService.unlogged();
        } else {
            this.causal = null;
            this.timers = service;
        }
        Properties consumerConfig = ReadBack.consumerConfig(sink.producerConfig());
        int attempt = context.getTaskInfo().getAttemptNumber();
        if (restored.size() == 1) {
            WriterCheckpoint checkpoint = restored.iterator().next();
            this.writerId = checkpoint.writerId();
            this.nextPosition = checkpoint.nextPosition();
            this.readFrom = new HashMap<>(checkpoint.readFrom());
            this.published =
                    ReadBack.read(consumerConfig, topics, writerId, nextPosition, readFrom);
        } else {
            if (restored.size() > 1) {
                LOG.warn(
                        "{}: restored {} writer checkpoints (the parallelism changed): what their writers published after the checkpoint is not compared with what this writer publishes, and may appear twice.",
                        taskName,
                        restored.size());
            }
            this.writerId =
                    writerId(
                            context.getJobInfo().getJobId().toString(),
                            context.getTaskInfo().getTaskName(),
                            context.getTaskInfo().getIndexOfThisSubtask());
            this.nextPosition = 0;
            if (attempt > 0 && restored.isEmpty()) {
                // a predecessor before the job's first checkpoint: its start is not known
                this.readFrom = new HashMap<>();
                this.published = ReadBack.read(consumerConfig, topics, writerId, 0, readFrom);
            } else {
                this.readFrom = new HashMap<>(ReadBack.endOffsets(consumerConfig, topics));
                this.published = PublishedOutput.nothing();
            }
        }
        answerRecovery();
        this.producer = new KafkaProducer<>(sink.producerConfig());
        this.skipped = context.metricGroup().counter("clonosSkippedRecords");
        this.divergent = context.metricGroup().counter("clonosDivergentRecords");
        this.determinantBytes = context.metricGroup().counter("clonosDeterminantHeaderBytes");
        this.sinkContext = sinkContext(context);
        try {
            serializer.open(context.asSerializationSchemaInitializationContext(), sinkContext);
        } catch (Exception e) {
            producer.close(Duration.ZERO);
            throw new IOException("The record serializer of the Clonos Kafka sink did not open", e);
        }
        schedulePublication();
    }

    /** The task's recovery waits for this writer's answer: the determinants read back. */
    private void answerRecovery() {
        if (causal == null || !causal.hasExternalHolder() || !causal.recovery().isWaiting()) {
            return;
        }
        if (published.whyNoDeterminants().isPresent()) {
            throw new LocalRecoveryImpossibleException(
                    taskName
                            + ": the determinants its predecessor stored in Kafka are unusable: "
                            + published.whyNoDeterminants().get());
        }
        try {
            // what the records carried of epochs before the restored one (the rest of an upstream
            // epoch that reached the predecessor after its last publication before the
            // checkpoint) is of no use to a recovery from it, and starts within its epoch
            long restored = causal.recovery().restoredEpoch();
            causal.answeredByExternalHolder(
                    published.determinants().stream()
                            .filter(shared -> shared.delta().epoch() >= restored)
                            .collect(Collectors.toList()));
        } catch (CorruptCausalLogException e) {
            throw new LocalRecoveryImpossibleException(
                    taskName
                            + ": the determinants its predecessor stored in Kafka do not agree: "
                            + e.getMessage());
        }
    }

    @Override
    public void write(IN element, Context context) throws IOException {
        checkAsyncError();
        ProducerRecord<byte[], byte[]> record =
                serializer.serialize(element, sinkContext, context.timestamp());
        if (record == null) {
            return;
        }
        if (!topics.contains(record.topic())) {
            throw new IllegalArgumentException(
                    "The Clonos Kafka sink got a record for topic '"
                            + record.topic()
                            + "', which is not among its topics "
                            + topics
                            + " (ClonosKafkaSinkBuilder#setTopics): a successor would not read it back");
        }
        long position = nextPosition++;
        long digest = published.digestAt(position);
        if (digest != PublishedOutput.NOT_PUBLISHED && !divergedOnce) {
            if (digest == PublishedOutput.digest(record)) {
                skipped.inc();
                return;
            }
            diverged(position);
        }
        // once the output diverged, any record may repeat one its predecessor published at
        // another position; before, only one at a position the predecessor's output has a gap at
        // (a record lost with it) may, if the replay does not follow the predecessor's choices
        boolean divergentRecord =
                divergedOnce
                        || (position <= published.lastPosition()
                                && (causal == null || !causal.recovery().replaysDeterminants()));
        if (divergentRecord) {
            divergent.inc();
        }
        RecordHeaders headers = new RecordHeaders(record.headers().toArray());
        headers.add(OutputHeaders.POSITION, OutputHeaders.position(writerId, position));
        if (divergentRecord) {
            headers.add(OutputHeaders.DIVERGENT, new byte[0]);
        }
        waiting.add(
                new ProducerRecord<>(
                        record.topic(),
                        record.partition(),
                        record.timestamp(),
                        record.key(),
                        record.value(),
                        headers));
        if (waiting.size() >= MAX_PUBLICATION) {
            publish();
        }
    }

    /**
     * The record at {@code position} differs from what a predecessor published there. In a recovery
     * by determinants that cannot be (the replay reproduces the predecessor): it falls back to a
     * global rollback. Otherwise the policy decides; returns whether to publish it.
     */
    private void diverged(long position) {
        String what =
                taskName
                        + ": the record at position "
                        + position
                        + " differs from the one a predecessor published there";
        if (causal != null && causal.recovery().replaysDeterminants()) {
            throw new LocalRecoveryImpossibleException(
                    what + ", although it replays its determinants");
        }
        if (onDivergence == DivergencePolicy.FAIL) {
            throw new SuppressRestartsException(
                    new IllegalStateException(
                            what
                                    + " (its choices did not all reach Kafka, or the job is another"
                                    + " one): the sink's divergence policy is FAIL"));
        }
        LOG.warn(
                "{}; publishing it, and every record after it, marked {} (counted in clonosDivergentRecords): they may repeat what the predecessor published.",
                what,
                OutputHeaders.DIVERGENT);
        divergedOnce = true;
    }

    /** Hands the waiting records to the producer, the determinants not yet durable with them. */
    private void publish() throws IOException {
        if (waiting.isEmpty()) {
            return;
        }
        if (causal != null) {
            undurable.add(downstream.next(causal));
        }
        byte[] determinants = undurable.header();
        long carriedUpTo = undurable.lastIndex();
        Set<TopicPartition> carried = new HashSet<>();
        stickyPartition++;
        for (ProducerRecord<byte[], byte[]> record : waiting) {
            TopicPartition partition = new TopicPartition(record.topic(), partitionOf(record));
            boolean carrier = determinants != null && carried.add(partition);
            if (carrier) {
                record.headers().add(OutputHeaders.DETERMINANTS, determinants);
                determinantBytes.inc(determinants.length);
            }
            producer.send(
                    new ProducerRecord<>(
                            record.topic(),
                            partition.partition(),
                            record.timestamp(),
                            record.key(),
                            record.value(),
                            record.headers()),
                    acknowledged(partition, carrier ? carriedUpTo : -1));
        }
        waiting.clear();
        if (undurable.bytes() > maxUndurableBytes) {
            // bounds what each carrier holds: wait until the carriers sent are acknowledged
            producer.flush();
            checkAsyncError();
        }
    }

    private Callback acknowledged(TopicPartition partition, long carriedUpTo) {
        return (metadata, exception) -> {
            if (exception != null) {
                asyncError.compareAndSet(null, exception);
                return;
            }
            acknowledgedEnd.merge(partition, metadata.offset() + 1, Math::max);
            if (carriedUpTo >= 0) {
                undurable.durableUpTo(carriedUpTo);
            }
        };
    }

    /**
     * The record's partition: its own, else by its key as Kafka's producer chooses, else one
     * partition per publication (as Kafka's sticky partitioning does per batch).
     */
    private int partitionOf(ProducerRecord<byte[], byte[]> record) {
        if (record.partition() != null) {
            return record.partition();
        }
        int count = partitionsOf(record.topic()).length;
        if (record.key() != null) {
            return Utils.toPositive(Utils.murmur2(record.key())) % count;
        }
        return Math.floorMod(stickyPartition, count);
    }

    /** The topic's partitions; the serializer may ask for every record, so they are kept. */
    private int[] partitionsOf(String topic) {
        return partitions.computeIfAbsent(
                topic,
                t ->
                        producer.partitionsFor(t).stream()
                                .mapToInt(PartitionInfo::partition)
                                .sorted()
                                .toArray());
    }

    private void schedulePublication() {
        long due = timers.getCurrentProcessingTime() + publishIntervalMillis;
        timers.registerTimer(
                due,
                time -> {
                    if (!closed) {
                        publish();
                        schedulePublication();
                    }
                });
    }

    @Override
    public void flush(boolean endOfInput) throws IOException {
        publish();
        producer.flush();
        checkAsyncError();
    }

    @Override
    public List<WriterCheckpoint> snapshotState(long checkpointId) throws IOException {
        flush(false);
        acknowledgedEnd.forEach((partition, end) -> readFrom.merge(partition, end, Math::max));
        // A successor reads back only what follows this checkpoint, but an upstream task's log
        // may hold bytes of the new epoch already (its delta can travel ahead of its barrier):
        // the first publication after the checkpoint carries everything the task holds again.
        downstream = new DownstreamCopy();
        return List.of(new WriterCheckpoint(writerId, nextPosition, readFrom));
    }

    @Override
    public void close() {
        closed = true;
        // a failed or cancelled writer sends nothing more: its successor reads back what is there
        producer.close(Duration.ZERO);
    }

    private void checkAsyncError() throws IOException {
        Exception error = asyncError.get();
        if (error != null) {
            throw new IOException("The Clonos Kafka sink could not publish a record", error);
        }
    }

    private KafkaSinkContext sinkContext(WriterInitContext context) {
        return new KafkaSinkContext() {
            @Override
            public int getParallelInstanceId() {
                return context.getTaskInfo().getIndexOfThisSubtask();
            }

            @Override
            public int getNumberOfParallelInstances() {
                return context.getTaskInfo().getNumberOfParallelSubtasks();
            }

            @Override
            public int[] getPartitionsForTopic(String topic) {
                return partitionsOf(topic);
            }
        };
    }

    /** A writer's id: a digest of its job, its task and its subtask. */
    static byte[] writerId(String jobId, String taskName, int subtask) {
        try {
            byte[] hash =
                    MessageDigest.getInstance("SHA-256")
                            .digest(
                                    (jobId + "/" + taskName + "/" + subtask)
                                            .getBytes(StandardCharsets.UTF_8));
            return Arrays.copyOf(hash, OutputHeaders.WRITER_ID_BYTES);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("Every Java platform has SHA-256", e);
        }
    }
}
